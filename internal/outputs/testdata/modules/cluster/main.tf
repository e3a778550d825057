# A cluster module's outputs once everything is known.
output "control_plane_endpoint" {
  value     = { host = "api.example.test", port = 6443 }
  sensitive = true
}
output "failure_domains" {
  value = [
    { name = "zone-b", control_plane = true, attributes = { zone = "b" } },
    { name = "zone-a", control_plane = false, attributes = {} },
    { name = "zone-c" },
  ]
  sensitive = true
}
output "exports" {
  value     = { cluster_id = "c-123", subnets = ["s-1", "s-2"], count = 3, nested = { ok = true }, html = "<a&b>" }
  sensitive = true
}
output "health" {
  value     = { state = "running", healthy = true, message = null, reasons = [] }
  sensitive = true
}
output "not_a_contract_output" {
  value = "ignored"
}
