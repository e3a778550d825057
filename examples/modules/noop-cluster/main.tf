# A cluster-role module that creates nothing outside its state: a stand-in
# for a network and a load balancer, so CAPTF can be tried without a cloud.
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

# The "network", tagged like every resource a real module creates.
resource "terraform_data" "network" {
  triggers_replace = merge(var.captf_tags, { cidr = try(var.cluster_network.pods[0], "192.168.0.0/16") })
}

# The "load balancer" in front of the control plane; it records whether the
# control plane is initialized, which a real module may act on.
resource "terraform_data" "load_balancer" {
  triggers_replace = merge(var.captf_tags, {
    network     = terraform_data.network.id
    initialized = tostring(var.control_plane_initialized)
  })
}

locals {
  host = var.control_plane_endpoint != null ? var.control_plane_endpoint.host : "${random_pet.cluster.id}.noop.invalid"
  port = var.control_plane_endpoint != null ? var.control_plane_endpoint.port : coalesce(try(var.cluster_network.api_server_port, null), 6443)
}
