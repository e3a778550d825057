# A small module for the runner's integration tests. It uses only the
# providers of the test mirror (null, random) and needs no network.
terraform {
  required_providers {
    null   = { source = "hashicorp/null" }
    random = { source = "hashicorp/random" }
  }
}

variable "name" {
  type = string
}

variable "generation" {
  type    = number
  default = 1
}

variable "token" {
  type      = string
  default   = ""
  sensitive = true
}

resource "random_pet" "this" {
  keepers = { name = var.name }
}

# Replaced whenever generation changes: the destructive change of the tests.
resource "null_resource" "server" {
  triggers = {
    generation = var.generation
    name       = var.name
  }
}

output "pet" {
  value = random_pet.this.id
}

output "server_id" {
  value = null_resource.server.id
}
