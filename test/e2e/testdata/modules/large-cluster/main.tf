# A cluster-role module whose state is over 1 MiB compressed: each
# random_string of a million characters adds about 0.8 MB of gzip. OpenTofu's
# kubernetes backend cannot store it; Terraform's splits it across Secrets.
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

# blobs = 0 shrinks the state back into one Secret.
variable "blobs" {
  type    = number
  default = 2
}

resource "random_string" "blob" {
  count  = var.blobs
  length = 1000000
}

locals {
  host = var.control_plane_endpoint != null ? var.control_plane_endpoint.host : "${random_pet.cluster.id}.noop.invalid"
  port = var.control_plane_endpoint != null ? var.control_plane_endpoint.port : 6443
}
