# A scaled-to-zero pool whose instances carry null optional attributes (try(..., null)),
# and a member with no instance_id at all; replicas 0 is stored explicitly.
locals {
  members = [
    { provider_id = "noop://w-9", instance_id = null, addresses = null, failure_domain = null, state = null },
  ]
}
output "provider_id" {
  value     = null
  sensitive = true
}
output "provider_id_list" {
  value     = []
  sensitive = true
}
output "replicas" {
  value     = 0
  sensitive = true
}
output "instances" {
  value     = local.members
  sensitive = true
}
output "health" {
  value     = { state = "running", healthy = true, message = null, reasons = null }
  sensitive = true
}
