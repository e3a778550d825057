# A machine-role module whose "instance" lives only in its state: it
# consumes the bootstrap data (by digest) and reports an address, a provider
# ID and a healthy instance.
terraform {
  required_version = ">= 1.6"
  required_providers {
    random = { source = "hashicorp/random" }
  }
}

resource "random_id" "instance" {
  byte_length = 4
  keepers     = { machine = var.machine_name }
}

resource "terraform_data" "instance" {
  triggers_replace = merge(var.captf_tags, {
    instance  = random_id.instance.hex
    cluster   = try(var.captf_cluster_outputs.cluster_id, "")
    bootstrap = sha256(var.bootstrap_data)
    format    = var.bootstrap_format
    role      = var.control_plane ? "control-plane" : "worker"
    version   = coalesce(var.kubernetes_version, "unset")
  })
}

locals {
  zones          = ["noop-a", "noop-b"]
  failure_domain = coalesce(var.failure_domain, local.zones[random_id.instance.dec % length(local.zones)])
  # A stable private address derived from the instance ID.
  address = cidrhost("10.77.0.0/16", random_id.instance.dec % 65000 + 10)
}
