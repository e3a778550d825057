# Contract outputs of the machine role.

output "provider_id" {
  value = "noop://${var.captf_object.namespace}/${var.machine_name}/${terraform_data.instance.id}"
}

output "addresses" {
  value = [{ type = "Hostname", address = var.machine_name }]
}

output "failure_domain" {
  value = var.failure_domain
}

output "interruptible" {
  value = false
}

output "health" {
  value = { state = "running", healthy = true, reasons = [] }
}
