# A module whose apply takes a while, for interruption tests.
terraform {
  required_providers {
    null = { source = "hashicorp/null" }
    time = { source = "hashicorp/time" }
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

resource "null_resource" "first" {
  triggers = { name = var.name }
}

resource "time_sleep" "wait" {
  depends_on      = [null_resource.first]
  create_duration = "30s"
}

resource "null_resource" "after" {
  depends_on = [time_sleep.wait]
}

output "pet" {
  value = var.name
}

output "server_id" {
  value = null_resource.first.id
}
