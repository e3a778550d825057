# A module for the plan package's golden fixtures (see ../generate.sh).
# Every change the fixtures need is steered by one variable, and nothing in
# a plan depends on the clock (no timestamp(), time_static gets a fixed
# time) so that two plans of the same state and inputs are the same plan.

terraform {
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "1.0.0"
    }
    random = {
      source  = "hashicorp/random"
      version = "2.0.0"
    }
    local = {
      source  = "hashicorp/local"
      version = "1.4.0"
    }
    time = {
      source  = "hashicorp/time"
      version = "0.14.2"
    }
  }
}

variable "trigger" {
  description = "Changing it replaces null_resource.this."
  type        = string
  default     = "one"
}

variable "label" {
  description = "Changing it updates terraform_data.label in place."
  type        = string
  default     = "alpha"
}

variable "with_file" {
  description = "false deletes local_file.this."
  type        = bool
  default     = true
}

variable "greeting" {
  description = "Changing it changes only the greeting output."
  type        = string
  default     = "hello"
}

resource "random_pet" "this" {
  length = 2
}

resource "random_string" "this" {
  length  = 12
  special = false
}

resource "time_static" "this" {
  rfc3339 = "2024-01-02T03:04:05Z"
}

resource "null_resource" "this" {
  triggers = {
    trigger = var.trigger
    pet     = random_pet.this.id
  }
}

resource "terraform_data" "label" {
  input = {
    label = var.label
    tags  = ["a", "b"]
  }
}

resource "local_file" "this" {
  count    = var.with_file ? 1 : 0
  filename = "${path.module}/out/hello.txt"
  content  = "hello from ${random_pet.this.id}\n"
}

output "greeting" {
  value = var.greeting
}

output "pet" {
  value = random_pet.this.id
}

output "token" {
  value     = random_string.this.result
  sensitive = true
}

output "year" {
  value = time_static.this.year
}
