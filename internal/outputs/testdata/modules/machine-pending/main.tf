# A machine being created: provider_id "" (normalised to null), no addresses yet.
output "provider_id" {
  value     = ""
  sensitive = true
}
output "addresses" {
  value     = null
  sensitive = true
}
output "failure_domain" {
  value     = null
  sensitive = true
}
output "interruptible" {
  value     = true
  sensitive = true
}
output "health" {
  value     = { state = "pending", healthy = false }
  sensitive = true
}
