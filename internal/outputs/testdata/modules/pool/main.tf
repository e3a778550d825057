# A pool: provider_id_list neither sorted nor unique, instances with optional attributes.
output "provider_id" {
  value     = "asg-workers"
  sensitive = true
}
output "provider_id_list" {
  value     = ["noop://w-2", "noop://w-0", "noop://w-1", "noop://w-0"]
  sensitive = true
}
output "replicas" {
  value     = 3
  sensitive = true
}
output "instances" {
  value = [
    { provider_id = "noop://w-2", instance_id = "w-2", failure_domain = "zone-b", state = "pending", addresses = [] },
    { provider_id = "noop://w-0", instance_id = "w-0", failure_domain = "zone-a", state = "running",
      addresses = [{ type = "Hostname", address = "w-0" }, { type = "InternalIP", address = "10.0.0.10" }] },
    { provider_id = "noop://w-1" },
  ]
  sensitive = true
}
output "health" {
  value     = { state = "degraded", healthy = false, message = "1 of 3 instances pending", reasons = ["InstancePending", "ScalingUp"] }
  sensitive = true
}
