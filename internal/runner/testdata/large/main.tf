# A module whose state is over 1 MiB compressed: each random_string of a
# million characters adds about 0.8 MB of gzip.
terraform {
  required_providers {
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

resource "random_string" "blob" {
  count  = 2
  length = 1000000
}

output "pet" {
  value = var.name
}

output "server_id" {
  value = length(random_string.blob)
}
