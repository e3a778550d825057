# Contract outputs of the cluster role.

output "control_plane_endpoint" {
  value = { host = local.host, port = local.port }
}

output "failure_domains" {
  value = [
    { name = "noop-a", control_plane = true, attributes = { zone = "a" } },
    { name = "noop-b", control_plane = true, attributes = { zone = "b" } },
    { name = "noop-c", control_plane = false, attributes = { zone = "c" } },
  ]
}

# The only handoff to machines and pools: they receive it as
# captf_cluster_outputs. Never put secrets here.
output "exports" {
  value = {
    cluster_id = random_pet.cluster.id
    network_id = terraform_data.network.id
    region     = "noop-local"
  }
}

output "health" {
  value = { state = "running", healthy = true, message = "noop cluster ${random_pet.cluster.id}", reasons = [] }
}
