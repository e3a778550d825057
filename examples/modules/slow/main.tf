# The noop machine with a slow apply (time_sleep), for interruption tests:
# deleting its Job mid-apply must leave the state written and the lock
# released.
terraform {
  required_version = ">= 1.6"
  required_providers {
    time = { source = "hashicorp/time" }
  }
}

resource "terraform_data" "instance" {
  triggers_replace = merge(var.captf_tags, { machine = var.machine_name, bootstrap = sha256(var.bootstrap_data) })
}

resource "time_sleep" "boot" {
  depends_on      = [terraform_data.instance]
  create_duration = "45s"
}
