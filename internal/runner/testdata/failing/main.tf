# A module whose apply fails with the name in its error message, for the
# redaction tests.
terraform {
  required_providers {
    local = { source = "hashicorp/local" }
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

resource "local_file" "hosts" {
  filename = "/proc/captf-${var.name}/hosts.txt"
  content  = "10.0.0.1 cp\n"
}

output "pet" {
  value = var.name
}

output "server_id" {
  value = local_file.hosts.id
}
