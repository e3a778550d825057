# A cluster module early on: endpoint and failure domains not known, no exports.
output "control_plane_endpoint" {
  value     = null
  sensitive = true
}
output "failure_domains" {
  value     = null
  sensitive = true
}
output "exports" {
  value     = null
  sensitive = true
}
output "health" {
  value     = { state = "pending", healthy = false, message = "load balancer provisioning", reasons = ["LBPending"] }
  sensitive = true
}
