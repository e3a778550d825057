# A cluster-role module whose destroy is slow before it destroys anything:
# a destroy Job with a deadline of a second is stopped with every resource
# still in its state, however fast the machine.
terraform {
  required_version = ">= 1.6"
  required_providers {
    random = { source = "hashicorp/random" }
  }
}

resource "random_pet" "cluster" {
  length  = 2
  keepers = { cluster = "${var.captf_cluster.namespace}/${var.captf_cluster.name}" }
}

resource "terraform_data" "network" {
  triggers_replace = merge(var.captf_tags, { cidr = try(var.cluster_network.pods[0], "192.168.0.0/16") })
}

# It depends on every other resource, so a destroy starts with it, and
# its destroy-time provisioner waits before the resource goes.
resource "terraform_data" "slow_to_destroy" {
  input = [random_pet.cluster.id, terraform_data.network.id]
  provisioner "local-exec" {
    when    = destroy
    command = "sleep 10"
  }
}

locals {
  host = var.control_plane_endpoint != null ? var.control_plane_endpoint.host : "${random_pet.cluster.id}.noop.invalid"
  port = var.control_plane_endpoint != null ? var.control_plane_endpoint.port : 6443
}
