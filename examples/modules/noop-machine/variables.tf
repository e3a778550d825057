# Contract inputs of the machine role (module contract v1alpha1).

variable "captf_contract" {
  type = string
}

variable "captf_cluster" {
  type = object({ name = string, namespace = string })
}

variable "captf_object" {
  type = object({ kind = string, name = string, namespace = string })
}

variable "captf_cluster_outputs" {
  type = any
}

variable "captf_tags" {
  type = map(string)
}

variable "machine_name" {
  type = string
}

variable "bootstrap_data" {
  type      = string
  sensitive = true
}

variable "bootstrap_format" {
  type = string
}

variable "failure_domain" {
  type     = string
  default  = null
  nullable = true
}

variable "kubernetes_version" {
  type     = string
  default  = null
  nullable = true
}

variable "control_plane" {
  type = bool
}
