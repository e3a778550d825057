# Contract outputs of the cluster role.

output "control_plane_endpoint" {
  value = { host = local.host, port = local.port }
}

output "failure_domains" {
  value = [{ name = "noop-a", control_plane = true, attributes = { zone = "a" } }]
}

output "exports" {
  value = {
    cluster_id             = random_pet.cluster.id
    generation             = var.generation
    credential_fingerprint = local.credential_fingerprint
  }
}

output "health" {
  value = { state = "running", healthy = true, message = "noop cluster ${random_pet.cluster.id}", reasons = [] }
}
