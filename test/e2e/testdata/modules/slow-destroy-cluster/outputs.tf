# Contract outputs of the cluster role.

output "control_plane_endpoint" {
  value = { host = local.host, port = local.port }
}

output "failure_domains" {
  value = [{ name = "noop-a", control_plane = true, attributes = { zone = "a" } }]
}

output "exports" {
  value = { cluster_id = random_pet.cluster.id }
}

output "health" {
  value = { state = "running", healthy = true, message = "slow-to-destroy noop cluster ${random_pet.cluster.id}", reasons = [] }
}
