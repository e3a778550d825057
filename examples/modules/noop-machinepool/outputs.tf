# Contract outputs of the machinepool role.

output "provider_id" {
  value = null
}

output "provider_id_list" {
  value = sort([for m in local.members : m.provider_id])
}

output "replicas" {
  value = length(local.members)
}

output "instances" {
  value = local.members
}

output "health" {
  value = { state = "running", healthy = true, message = "${length(local.members)} noop instances", reasons = [] }
}
