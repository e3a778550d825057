# A running machine: addresses out of canonical order, interruptible left null.
output "provider_id" {
  value     = "aws:///us-east-1a/i-0123456789abcdef0"
  sensitive = true
}
output "addresses" {
  value = [
    { type = "Hostname", address = "ip-10-0-0-7" },
    { type = "ExternalIP", address = "203.0.113.9" },
    { type = "InternalIP", address = "10.0.0.7" },
    { type = "InternalDNS", address = "ip-10-0-0-7.ec2.internal" },
    { type = "InternalIP", address = "10.0.0.12" },
  ]
  sensitive = true
}
output "failure_domain" {
  value     = "us-east-1a"
  sensitive = true
}
output "interruptible" {
  value     = null
  sensitive = true
}
output "health" {
  value     = { state = "running", healthy = true, message = "instance i-0123 running", reasons = [] }
  sensitive = true
}
