resource "null_resource" "boot" {
  triggers = {
    name = var.missing
  }
}

resource "random_pet" "name" {
  length = "many"
}

terraform {
  required_providers {
    null   = { source = "hashicorp/null" }
    random = { source = "hashicorp/random" }
  }
}
