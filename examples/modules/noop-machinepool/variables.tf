# Contract inputs of the machinepool role (module contract v1alpha1).

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

variable "machinepool_name" {
  type = string
}

variable "replicas" {
  type = number
}

variable "bootstrap_data" {
  type      = string
  sensitive = true
}

variable "bootstrap_format" {
  type = string
}

variable "failure_domains" {
  type = list(string)
}

variable "cluster_failure_domains" {
  type = list(string)
}

variable "kubernetes_version" {
  type     = string
  default  = null
  nullable = true
}

variable "node_labels" {
  type = map(string)
}

variable "autoscaling" {
  type = object({ enabled = bool, min = number, max = number })
}

variable "scale_delay" {
  description = "How long an apply that changes the member count waits, as a duration such as 20s (0s: not at all)."
  type        = string
  default     = "0s"
}
