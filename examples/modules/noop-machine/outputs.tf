# Contract outputs of the machine role.

output "provider_id" {
  value = "noop://${var.captf_object.namespace}/${var.machine_name}/${local.hex}"
}

output "addresses" {
  value = [
    { type = "InternalIP", address = local.address },
    { type = "Hostname", address = var.machine_name },
  ]
}

output "failure_domain" {
  value = local.failure_domain
}

output "interruptible" {
  value = false
}

output "health" {
  value = { state = "running", healthy = true, message = "noop instance ${local.hex}", reasons = [] }
}
