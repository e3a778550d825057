# Contract inputs of the cluster role (module contract v1alpha1).

variable "captf_contract" {
  type = string
}

variable "captf_cluster" {
  type = object({ name = string, namespace = string })
}

variable "captf_object" {
  type = object({ kind = string, name = string, namespace = string })
}

variable "captf_tags" {
  type = map(string)
}

variable "control_plane_endpoint" {
  type     = object({ host = string, port = number })
  default  = null
  nullable = true
}

variable "kubernetes_version" {
  type     = string
  default  = null
  nullable = true
}

variable "control_plane_initialized" {
  type = bool
}

variable "cluster_network" {
  type = object({
    pods            = list(string)
    services        = list(string)
    service_domain  = string
    api_server_port = number
  })
  default  = null
  nullable = true
}

# A user variable (spec.variables or spec.variablesFrom), not a contract
# input: it changes nothing the module creates, so changing it applies
# without a plan to approve.
variable "description" {
  type    = string
  default = ""
}
