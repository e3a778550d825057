# A cluster-role module that shows which credential its Job received: it
# reads the key NOOP_TOKEN of the credentials mirror, which every Job gets
# as a file under /var/run/captf/credentials, and publishes a fingerprint
# of it (never the value) in its exports.
terraform {
  required_version = ">= 1.6"
  required_providers {
    random = { source = "hashicorp/random" }
  }
}

variable "generation" {
  type    = number
  default = 1
}

resource "random_pet" "cluster" {
  length  = 2
  keepers = { cluster = "${var.captf_cluster.namespace}/${var.captf_cluster.name}" }
}

resource "terraform_data" "network" {
  triggers_replace = merge(var.captf_tags, { cidr = try(var.cluster_network.pods[0], "192.168.0.0/16") })
}

locals {
  host = var.control_plane_endpoint != null ? var.control_plane_endpoint.host : "${random_pet.cluster.id}.noop.invalid"
  port = var.control_plane_endpoint != null ? var.control_plane_endpoint.port : 6443
  # Read at every run: the file follows the identity's source Secret.
  credential_fingerprint = sha256(file("/var/run/captf/credentials/NOOP_TOKEN"))
}
