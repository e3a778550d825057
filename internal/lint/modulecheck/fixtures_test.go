package modulecheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"captf.io/captf/pkg/contract"
)

// A clean module per role, in one main.tf, that every case edits.
const commonVariables = `terraform {
  required_version = ">= 1.6"
  required_providers {
    example = { source = "example/example" }
  }
}

variable "captf_contract" { type = string }
variable "captf_cluster" { type = object({ name = string, namespace = string }) }
variable "captf_object" { type = object({ kind = string, name = string, namespace = string }) }
variable "captf_tags" { type = map(string) }
variable "size" {
  type    = string
  default = "small"
}
`

var cleanModules = map[contract.Role]string{
	contract.RoleCluster: commonVariables + `
variable "control_plane_endpoint" {
  type    = object({ host = string, port = number })
  default = null
}
variable "kubernetes_version" { type = string }
variable "control_plane_initialized" { type = bool }
variable "cluster_network" {
  type = object({ pods = list(string), services = list(string), service_domain = string, api_server_port = number })
}

resource "example_network" "net" {
  tags = var.captf_tags
  size = var.size
}

output "control_plane_endpoint" { value = { host = example_network.net.lb, port = 6443 } }
output "failure_domains" { value = [] }
output "exports" { value = { network_id = example_network.net.id } }
output "health" { value = { state = "running", healthy = true } }
`,
	contract.RoleMachine: commonVariables + `
variable "captf_cluster_outputs" { type = any }
variable "machine_name" { type = string }
variable "bootstrap_data" {
  type      = string
  sensitive = true
}
variable "bootstrap_format" { type = string }
variable "failure_domain" { type = string }
variable "kubernetes_version" { type = string }
variable "control_plane" { type = bool }

resource "example_instance" "vm" {
  name      = var.machine_name
  user_data = var.bootstrap_data
  tags      = var.captf_tags
}

output "provider_id" { value = "example://${example_instance.vm.id}" }
output "addresses" { value = [] }
output "failure_domain" { value = var.failure_domain }
output "interruptible" { value = false }
output "health" { value = { state = "running", healthy = true } }
`,
	contract.RoleMachinePool: commonVariables + `
variable "captf_cluster_outputs" { type = any }
variable "machinepool_name" { type = string }
variable "replicas" { type = number }
variable "bootstrap_data" {
  type      = string
  sensitive = true
}
variable "bootstrap_format" { type = string }
variable "failure_domains" { type = list(string) }
variable "cluster_failure_domains" { type = list(string) }
variable "kubernetes_version" { type = string }
variable "node_labels" { type = map(string) }
variable "autoscaling" { type = object({ enabled = bool, min = number, max = number }) }

resource "example_group" "pool" {
  desired_capacity = var.replicas
  min_size         = var.autoscaling.enabled ? var.autoscaling.min : var.replicas
  tags             = var.captf_tags
  lifecycle {
    ignore_changes = [desired_capacity]
  }
}

output "provider_id" { value = null }
output "provider_id_list" { value = sort([for m in example_group.pool.members : m.id]) }
output "replicas" { value = length(example_group.pool.members) }
output "instances" { value = [] }
output "health" { value = { state = "running", healthy = true } }
`,
}

// edit is a change to a clean module: replace old by new in main.tf
// (old must be there), or write a file.
type edit struct {
	old, new string
	file     string // when set, write new to this path instead
}

// writeModule writes the clean module of role with the edits applied
// into a new directory and returns it.
func writeModule(t *testing.T, role contract.Role, edits ...edit) string {
	t.Helper()
	dir := t.TempDir()
	main := cleanModules[role]
	for _, e := range edits {
		if e.file != "" {
			writeFile(t, filepath.Join(dir, e.file), e.new)
			continue
		}
		if !strings.Contains(main, e.old) {
			t.Fatalf("the clean %s module has no %q to edit", role, e.old)
		}
		main = strings.Replace(main, e.old, e.new, 1)
	}
	writeFile(t, filepath.Join(dir, "main.tf"), main)
	return dir
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// lineOf returns the 1-based line of the first occurrence of s in the
// file, failing the test when it is not there.
func lineOf(t *testing.T, path, s string) int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(data), s)
	if i < 0 {
		t.Fatalf("%s has no %q", path, s)
	}
	return strings.Count(string(data[:i]), "\n") + 1
}
