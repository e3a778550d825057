# Contract outputs of the cluster role.

output "control_plane_endpoint" {
  value = { host = local.host, port = local.port }
}

output "failure_domains" {
  value = [{ name = "noop-a", control_plane = true, attributes = { zone = "a" } }]
}

# The blob's fingerprint tells whether a later run kept the blob the first
# apply created or made a new one.
output "exports" {
  value = {
    cluster_id       = random_pet.cluster.id
    blob_fingerprint = sha256(join("", random_string.blob[*].result))
  }
}

output "health" {
  value = { state = "running", healthy = true, message = "large noop cluster ${random_pet.cluster.id}", reasons = [] }
}
