# A machine-role module whose "instance" lives only in its state: it
# consumes the bootstrap data (by digest) and reports an address, a provider
# ID and a healthy instance. It needs no provider: terraform_data is built
# into both runtimes, and its id (a UUID drawn at creation) is the
# instance's identity, drawn again when the machine name changes. Machines
# are the most numerous Jobs; the cluster and pool modules take their
# providers from the image's mirror.
terraform {
  required_version = ">= 1.6"
}

resource "terraform_data" "id" {
  triggers_replace = { machine = var.machine_name }
}

resource "terraform_data" "instance" {
  triggers_replace = merge(var.captf_tags, {
    instance  = local.hex
    cluster   = try(var.captf_cluster_outputs.cluster_id, "")
    bootstrap = sha256(var.bootstrap_data)
    format    = var.bootstrap_format
    role      = var.control_plane ? "control-plane" : "worker"
    version   = coalesce(var.kubernetes_version, "unset")
  })
}

locals {
  # Eight hex digits of the instance's UUID, and their value.
  hex            = substr(replace(terraform_data.id.id, "-", ""), 0, 8)
  dec            = parseint(local.hex, 16)
  zones          = ["noop-a", "noop-b"]
  failure_domain = coalesce(var.failure_domain, local.zones[local.dec % length(local.zones)])
  # A stable private address derived from the instance ID.
  address = cidrhost("10.77.0.0/16", local.dec % 65000 + 10)
}
