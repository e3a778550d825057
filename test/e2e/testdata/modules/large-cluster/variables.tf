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
