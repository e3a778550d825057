# A machinepool-role module: one "instance" per replica, spread over the
# pool's failure domains (or the cluster's when the pool names none).
terraform {
  required_version = ">= 1.6"
  required_providers {
    random = { source = "hashicorp/random" }
    time   = { source = "hashicorp/time" }
  }
}

resource "random_id" "member" {
  count       = var.replicas
  byte_length = 4
  keepers     = { pool = var.machinepool_name }
}

# An apply that changes the member count waits var.scale_delay (none by
# default): tests use it to have a scale-up Job running for a while.
resource "time_sleep" "scale" {
  count           = var.scale_delay == "0s" ? 0 : 1
  create_duration = var.scale_delay
  triggers        = { replicas = tostring(var.replicas) }
}

resource "terraform_data" "member" {
  count = var.replicas
  triggers_replace = merge(var.captf_tags, {
    member    = random_id.member[count.index].hex
    cluster   = try(var.captf_cluster_outputs.cluster_id, "")
    bootstrap = sha256(var.bootstrap_data)
    labels    = jsonencode(var.node_labels)
  })
}

locals {
  zones = length(var.failure_domains) > 0 ? var.failure_domains : (length(var.cluster_failure_domains) > 0 ? var.cluster_failure_domains : ["noop-a"])
  members = [for i, m in random_id.member : {
    provider_id    = "noop://${var.captf_object.namespace}/${var.machinepool_name}/${m.hex}"
    instance_id    = m.hex
    failure_domain = local.zones[i % length(local.zones)]
    addresses      = [{ type = "InternalIP", address = cidrhost("10.78.0.0/16", m.dec % 65000 + 10) }]
    state          = "running"
  }]
}
