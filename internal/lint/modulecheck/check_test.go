package modulecheck

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"captf.io/captf/internal/lint"
	"captf.io/captf/pkg/contract"
)

// want is a finding a case expects: the line is that of the first
// occurrence of at in file ("" for line 0).
type want struct {
	id   string
	sev  lint.Severity
	file string
	at   string
}

var (
	cluster = contract.RoleCluster
	machine = contract.RoleMachine
	pool    = contract.RoleMachinePool
)

func replace(old, new string) edit          { return edit{old: old, new: new} }
func withFile(path, content string) edit    { return edit{file: path, new: content} }
func errAt(id, f, at string) want           { return want{id, lint.Error, f, at} }
func warnAt(id, f, at string) want          { return want{id, lint.Warning, f, at} }
func whole(id string, s lint.Severity) want { return want{id, s, lint.Whole, ""} }

var testCases = []struct {
	name  string
	role  contract.Role
	edits []edit
	want  []want
}{
	{"clean cluster", cluster, nil, nil},
	{"clean machine", machine, nil, nil},
	{"clean machinepool", pool, nil, nil},

	// input/required and input/tags-declared
	{"a contract input not declared", machine, []edit{replace(`variable "machine_name" { type = string }`, ``), replace(`name      = var.machine_name`, ``)},
		[]want{whole(idInputRequired, lint.Error)}},
	{"captf_tags not declared", machine, []edit{replace(`variable "captf_tags" { type = map(string) }`, ``), replace(`tags      = var.captf_tags`, ``)},
		[]want{whole(idTagsDeclared, lint.Error)}},
	// input/type
	{"a type that refuses what the root passes", machine, []edit{replace(`variable "control_plane" { type = bool }`, `variable "control_plane" { type = list(string) }`)},
		[]want{errAt(idInputType, "main.tf", `variable "control_plane"`)}},
	{"an object type wanting an attribute the root does not pass", cluster, []edit{replace(`api_server_port = number })`, `api_server_port = number, mtu = number })`)},
		[]want{errAt(idInputType, "main.tf", `variable "cluster_network"`)}},
	{"an object type with the attribute optional", cluster, []edit{replace(`api_server_port = number })`, `api_server_port = number, mtu = optional(number, 1500) })`)}, nil},
	{"a string type for a number converts", pool, []edit{replace(`variable "replicas" { type = number }`, `variable "replicas" { type = string }`)}, nil},
	{"no type", machine, []edit{replace(`variable "machine_name" { type = string }`, `variable "machine_name" {}`)},
		[]want{warnAt(idInputType, "main.tf", `variable "machine_name"`)}},
	{"an unreadable type", machine, []edit{replace(`variable "machine_name" { type = string }`, `variable "machine_name" { type = strang }`)},
		[]want{warnAt(idInputType, "main.tf", `variable "machine_name"`)}},
	{"nullable = false on an input the root may pass null", machine, []edit{replace(`variable "failure_domain" { type = string }`, "variable \"failure_domain\" {\n  type     = string\n  nullable = false\n}")},
		[]want{errAt(idInputType, "main.tf", `variable "failure_domain"`)}},
	// input/default
	{"a default on an input that is never null", machine, []edit{replace(`variable "machine_name" { type = string }`, "variable \"machine_name\" {\n  type    = string\n  default = \"vm\"\n}")},
		[]want{warnAt(idInputDefault, "main.tf", `variable "machine_name"`)}},
	{"a null default on a nullable input", machine, []edit{replace(`variable "kubernetes_version" { type = string }`, "variable \"kubernetes_version\" {\n  type    = string\n  default = null\n}")}, nil},
	{"a non-null default on a nullable input", machine, []edit{replace(`variable "kubernetes_version" { type = string }`, "variable \"kubernetes_version\" {\n  type    = string\n  default = \"v1.34.1\"\n}")},
		[]want{warnAt(idInputDefault, "main.tf", `variable "kubernetes_version"`)}},
	// input/sensitive
	{"bootstrap_data not sensitive", pool, []edit{replace("  type      = string\n  sensitive = true\n", "  type      = string\n")},
		[]want{warnAt(idInputSensitive, "main.tf", `variable "bootstrap_data"`)}},
	// input/reserved
	{"a captf_ variable that is no input", machine, []edit{replace(`variable "size" {`, "variable \"captf_size\" {\n  type    = string\n  default = \"x\"\n}\nvariable \"size\" {")},
		[]want{errAt(idInputReserved, "main.tf", `variable "captf_size"`)}},
	{"captf_cluster_outputs on a cluster, without default", cluster, []edit{replace(`variable "size" {`, "variable \"captf_cluster_outputs\" { type = any }\nvariable \"size\" {")},
		[]want{errAt(idInputReserved, "main.tf", `variable "captf_cluster_outputs"`)}},
	{"captf_cluster_outputs on a cluster, with a default", cluster, []edit{replace(`variable "size" {`, "variable \"captf_cluster_outputs\" {\n  type    = any\n  default = {}\n}\nvariable \"size\" {")}, nil},
	// input/tags-unused
	{"captf_tags never used", cluster, []edit{replace(`tags = var.captf_tags`, `tags = {}`)},
		[]want{warnAt(idTagsUnused, "main.tf", `variable "captf_tags"`)}},
	{"captf_tags used through a local module", cluster, []edit{
		replace(`tags = var.captf_tags`, `tags = module.tagging.tags`),
		replace(`output "health"`, "module \"tagging\" {\n  source = \"./tagging\"\n  input  = var.captf_tags\n}\noutput \"health\""),
		withFile("tagging/main.tf", "variable \"input\" { type = map(string) }\noutput \"tags\" { value = merge(var.input, {}) }\n"),
	}, nil},
	{"captf_tags passed to a local module that ignores it", cluster, []edit{
		replace(`tags = var.captf_tags`, `tags = {}`),
		replace(`output "health"`, "module \"tagging\" {\n  source = \"./tagging\"\n  input  = var.captf_tags\n}\noutput \"health\""),
		withFile("tagging/main.tf", "variable \"input\" { type = map(string) }\noutput \"tags\" { value = {} }\n"),
	}, []want{warnAt(idTagsUnused, "main.tf", `variable "captf_tags"`)}},
	// input/user-variable-default
	{"a user variable without default", machine, []edit{replace("variable \"size\" {\n  type    = string\n  default = \"small\"\n}", `variable "size" { type = string }`)},
		[]want{warnAt(idUserVariableDefault, "main.tf", `variable "size"`)}},
	// outputs
	{"a contract output missing", machine, []edit{replace(`output "addresses" { value = [] }`, ``)},
		[]want{whole(idOutputRequired, lint.Error)}},
	{"health missing", machine, []edit{replace(`output "health" { value = { state = "running", healthy = true } }`, ``)},
		[]want{whole(idOutputHealth, lint.Error)}},
	{"health without healthy", machine, []edit{replace(`{ state = "running", healthy = true }`, `{ state = "running" }`)},
		[]want{errAt(idOutputHealth, "main.tf", `output "health"`)}},
	{"a captf_ output", machine, []edit{replace(`output "addresses"`, "output \"captf_debug\" { value = 1 }\noutput \"addresses\"")},
		[]want{warnAt(idOutputReserved, "main.tf", `output "captf_debug"`)}},
	{"an endpoint that is always null", cluster, []edit{replace(`{ host = example_network.net.lb, port = 6443 }`, `null`)},
		[]want{warnAt(idEndpointNeverSet, "main.tf", `output "control_plane_endpoint"`)}},
	{"provider_id_list missing", pool, []edit{replace(`output "provider_id_list" { value = sort([for m in example_group.pool.members : m.id]) }`, ``)},
		[]want{whole(idProviderIDList, lint.Error)}},
	{"provider_id_list not a list", pool, []edit{replace(`sort([for m in example_group.pool.members : m.id])`, `"example://${example_group.pool.id}"`)},
		[]want{errAt(idProviderIDList, "main.tf", `output "provider_id_list"`)}},
	{"provider_id_list not sorted", pool, []edit{replace(`sort([for m in example_group.pool.members : m.id])`, `distinct([for m in example_group.pool.members : m.id])`)},
		[]want{warnAt(idProviderIDList, "main.tf", `output "provider_id_list"`)}},
	{"provider_id_list filtered on health", pool, []edit{replace(`: m.id])`, `: m.id if m.health_status == "Healthy"])`)},
		[]want{warnAt(idProviderIDList, "main.tf", `output "provider_id_list"`)}},
	// pool/autoscaling-ignore-changes
	{"autoscaling without ignore_changes", pool, []edit{replace("  lifecycle {\n    ignore_changes = [desired_capacity]\n  }\n", ``)},
		[]want{warnAt(idPoolIgnoreChanges, "main.tf", `variable "autoscaling"`)}},
	{"autoscaling with ignore_changes = all", pool, []edit{replace(`ignore_changes = [desired_capacity]`, `ignore_changes = all`)}, nil},
	{"autoscaling with ignore_changes in a local module", pool, []edit{
		replace("  lifecycle {\n    ignore_changes = [desired_capacity]\n  }\n", ``),
		replace(`output "health"`, "module \"asg\" {\n  source = \"./modules/asg\"\n}\noutput \"health\""),
		withFile("modules/asg/main.tf", "resource \"example_asg\" \"a\" {\n  lifecycle {\n    ignore_changes = [scaling_config[0].desired_size]\n  }\n}\n"),
	}, nil},
	// module/*
	{"a backend", machine, []edit{withFile("backend.tf", "terraform {\n  backend \"s3\" {}\n}\n")},
		[]want{errAt(idBackend, "backend.tf", `backend "s3"`)}},
	{"a backend in a local module", machine, []edit{
		replace(`output "health"`, "module \"net\" {\n  source = \"./net\"\n}\noutput \"health\""),
		withFile("net/main.tf", "terraform {\n  backend \"local\" {}\n}\n"),
	}, []want{errAt(idBackend, "net/main.tf", `backend "local"`)}},
	{"a cloud block", machine, []edit{withFile("cloud.tf", "terraform {\n  cloud {\n    organization = \"acme\"\n  }\n}\n")},
		[]want{errAt(idCloud, "cloud.tf", `cloud {`)}},
	{"a credential in a provider block", machine, []edit{withFile("provider.tf", "provider \"example\" {\n  region     = \"eu\"\n  access_key = \"AKIAEXAMPLE\"\n}\n")},
		[]want{warnAt(idProviderConfig, "provider.tf", `access_key`)}},
	{"a credential in a nested block and an object", machine, []edit{withFile("provider.tf", "provider \"example\" {\n  assume_role {\n    Secret = \"s3cr3t\"\n  }\n  auth = {\n    token = \"t0k3n\"\n  }\n}\n")},
		[]want{warnAt(idProviderConfig, "provider.tf", `Secret`), warnAt(idProviderConfig, "provider.tf", `token`)}},
	{"credentials from variables or empty", machine, []edit{withFile("provider.tf", "provider \"example\" {\n  access_key = var.size\n  token      = \"\"\n}\n")}, nil},
	{"a module source outside the module", machine, []edit{replace(`output "health"`, "module \"net\" {\n  source = \"../net\"\n}\noutput \"health\"")},
		[]want{errAt(idSourceEscape, "main.tf", `module "net"`)}},
	{"a module source that does not resolve", machine, []edit{replace(`output "health"`, "module \"net\" {\n  source = \"./net\"\n}\noutput \"health\"")},
		[]want{errAt(idSourceEscape, "main.tf", `module "net"`)}},
	{"a registry module is not followed", machine, []edit{replace(`output "health"`, "module \"net\" {\n  source  = \"acme/net/example\"\n  version = \"1.0.0\"\n}\noutput \"health\"")}, nil},
	{"a .tofu file declaring other things than the .tf it shadows", machine, []edit{withFile("extra.tf", "output \"debug\" { value = 1 }\n"), withFile("extra.tofu", "output \"debug2\" { value = 1 }\n")},
		[]want{warnAt(idTofuShadow, "extra.tf", `output`)}},
	{"a .tofu file declaring the same things", machine, []edit{withFile("extra.tf", "output \"debug\" { value = 1 }\n"), withFile("extra.tofu", "output \"debug\" { value = 2 }\n")}, nil},
	{"no required_version", machine, []edit{replace(`  required_version = ">= 1.6"`+"\n", ``)},
		[]want{whole(idVersion, lint.Info)}},
	// JSON syntax
	{"JSON: a user variable without default", machine, []edit{withFile("extra.tf.json", `{"variable": {"zone": {"type": "string"}}}`)},
		[]want{warnAt(idUserVariableDefault, "extra.tf.json", `"zone"`)}},
	{"JSON: a type that refuses what the root passes", machine, []edit{
		replace(`variable "control_plane" { type = bool }`, ``),
		withFile("cp.tf.json", `{"variable": {"control_plane": {"type": "list(string)"}}}`),
	}, []want{errAt(idInputType, "cp.tf.json", `"control_plane"`)}},
	{"JSON: captf_tags used", machine, []edit{
		replace(`tags      = var.captf_tags`, ``),
		withFile("tags.tf.json", `{"resource": {"example_tag": {"t": {"tags": "${var.captf_tags}"}}}}`),
	}, nil},
	{"JSON: a backend", machine, []edit{withFile("b.tf.json", `{"terraform": {"backend": {"s3": {}}}}`)},
		[]want{errAt(idBackend, "b.tf.json", `"s3"`)}},
	// What the runtimes do, which the checks follow (found in review)
	{"files the runtimes ignore are not read", machine, []edit{withFile(".hidden.tf", "garbage {{{"), withFile("main.tf~", "garbage {{{"), withFile("#main.tf#", "garbage {{{")}, nil},
	{"a .tofu file does not shadow a .tf.json file", machine, []edit{
		replace(`output "addresses" { value = [] }`, ``),
		withFile("extra.tf.json", `{"output": {"addresses": {"value": []}}}`), withFile("extra.tofu", "locals {\n  x = 1\n}\n"),
	}, nil},
	{"a shadowed .tf file is still checked: Terraform reads it", machine, []edit{
		withFile("extra.tf", "terraform {\n  backend \"s3\" {}\n}\n"), withFile("extra.tofu", "terraform {\n  required_version = \">= 1.6\"\n}\n"),
	}, []want{errAt(idBackend, "extra.tf", `backend "s3"`)}},
	{"an override file merges into the variable it overrides", machine, []edit{withFile("variables_override.tf", "variable \"bootstrap_data\" {\n  description = \"x\"\n}\n")}, nil},
	{"an override file that makes bootstrap_data not sensitive", machine, []edit{withFile("override.tf", "variable \"bootstrap_data\" {\n  sensitive = false\n}\n")},
		[]want{warnAt(idInputSensitive, "main.tf", `variable "bootstrap_data"`)}},
	{"a credential in a JSON nested block (an array)", machine, []edit{withFile("p.tf.json", `{"provider": {"example": [{"batching": [{"password": "p4ss"}]}]}}`)},
		[]want{warnAt(idProviderConfig, "p.tf.json", `{`)}},
	{"a credential in a list of objects", machine, []edit{withFile("provider.tf", "provider \"example\" {\n  headers = [{ api_key = \"k3y\" }]\n}\n")},
		[]want{warnAt(idProviderConfig, "provider.tf", `headers`)}},
	{"provider_id_list leaving out terminated members", pool, []edit{replace(`: m.id])`, `: m.id if m.state != "terminated"])`)}, nil},
	{"provider_id_list filtered on a name holding state", pool, []edit{replace(`: m.id])`, `: m.id if !contains(var.estate_skip, m.id)])`)}, nil},
	{"provider_id_list empty", pool, []edit{replace(`sort([for m in example_group.pool.members : m.id])`, `[]`)}, nil},
	{"provider_id_list not known yet", pool, []edit{replace(`sort([for m in example_group.pool.members : m.id])`, `null`)}, nil},
	{"ignore_changes on an attribute that is no size", pool, []edit{replace(`ignore_changes = [desired_capacity]`, `ignore_changes = [account_id]`)},
		[]want{warnAt(idPoolIgnoreChanges, "main.tf", `variable "autoscaling"`)}},
	{"ignore_changes in the quoted form", pool, []edit{replace(`ignore_changes = [desired_capacity]`, `ignore_changes = ["desired_capacity"]`)}, nil},
	{"a module calling itself", machine, []edit{replace(`output "health"`, "module \"self\" {\n  source = \".\"\n}\noutput \"health\"")},
		[]want{errAt(idSourceEscape, "main.tf", `module "self"`)}},
	{"two local modules calling each other", machine, []edit{
		replace(`output "health"`, "module \"a\" {\n  source = \"./a\"\n}\noutput \"health\""),
		withFile("a/main.tf", "module \"b\" {\n  source = \"../b\"\n}\n"),
		withFile("b/main.tf", "module \"a\" {\n  source = \"../a\"\n}\n"),
	}, []want{errAt(idSourceEscape, "b/main.tf", `module "a"`)}},
}

func TestCheck(t *testing.T) {
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := writeModule(t, tc.role, tc.edits...)
			res, err := Check(dir, Options{Role: tc.role})
			if err != nil {
				t.Fatalf("Check: %v", err)
			}
			var wantLines []string
			for _, w := range tc.want {
				line := 0
				if w.at != "" {
					line = lineOf(t, filepath.Join(dir, w.file), w.at)
				}
				wantLines = append(wantLines, fmt.Sprintf("%s %s %s:%d", w.sev, w.id, w.file, line))
			}
			var got []string
			for _, f := range res.Findings {
				got = append(got, fmt.Sprintf("%s %s %s:%d", f.Severity, f.ID, f.File, f.Line))
			}
			slices.Sort(wantLines)
			slices.Sort(got)
			if !slices.Equal(got, wantLines) {
				t.Errorf("findings:\n got  %q\n want %q\nmessages: %v", got, wantLines, res.Findings)
			}
			for _, f := range res.Findings {
				if f.Message == "" || strings.Contains(f.Message, "AKIAEXAMPLE") || strings.Contains(f.Message, "s3cr3t") {
					t.Errorf("finding %s: message %q is empty or shows a credential", f.ID, f.Message)
				}
			}
		})
	}
}

// Every check of the module table has a case.
func TestEveryCheckHasACase(t *testing.T) {
	covered := map[string]bool{}
	for _, tc := range testCases {
		for _, w := range tc.want {
			covered[w.id] = true
		}
	}
	for id := range severities {
		if !covered[id] {
			t.Errorf("check %s has no test case", id)
		}
	}
}

func TestSymlinkedFileOutOfTheModule(t *testing.T) {
	dir := writeModule(t, machine)
	outside := filepath.Join(t.TempDir(), "shared.tf")
	writeFile(t, outside, "output \"shared\" { value = 1 }\n")
	if err := os.Symlink(outside, filepath.Join(dir, "shared.tf")); err != nil {
		t.Fatal(err)
	}
	res, err := Check(dir, Options{Role: machine})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Findings) != 1 || res.Findings[0].ID != idSourceEscape || res.Findings[0].File != "shared.tf" {
		t.Fatalf("findings %v, want one %s on shared.tf", res.Findings, idSourceEscape)
	}
}

func TestModuleSourceLinkedOutOfTheModule(t *testing.T) {
	dir := writeModule(t, machine, replace(`output "health"`, "module \"net\" {\n  source = \"./net\"\n}\noutput \"health\""))
	outside := t.TempDir()
	writeFile(t, filepath.Join(outside, "main.tf"), "output \"x\" { value = 1 }\n")
	if err := os.Symlink(outside, filepath.Join(dir, "net")); err != nil {
		t.Fatal(err)
	}
	res, err := Check(dir, Options{Role: machine})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Findings) != 1 || res.Findings[0].ID != idSourceEscape || res.Findings[0].File != "main.tf" {
		t.Fatalf("findings %v, want one %s on main.tf", res.Findings, idSourceEscape)
	}
}

func TestProviders(t *testing.T) {
	dir := writeModule(t, machine,
		withFile("extra.tf", "resource \"random_id\" \"x\" {}\nresource \"terraform_data\" \"y\" {}\n"),
		replace(`output "health"`, "module \"net\" {\n  source = \"./net\"\n}\noutput \"health\""),
		withFile("net/main.tf", "terraform {\n  required_providers {\n    cloud = { source = \"registry.opentofu.org/acme/cloud\" }\n  }\n}\nresource \"cloud_net\" \"n\" {}\n"),
	)
	res, err := Check(dir, Options{Role: machine})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"example/example", "hashicorp/random", "registry.opentofu.org/acme/cloud"}
	if !slices.Equal(res.Providers, want) {
		t.Errorf("providers %q, want %q", res.Providers, want)
	}
	if !slices.Contains(res.Variables, "machine_name") || !slices.Contains(res.Variables, "size") {
		t.Errorf("variables %q lack machine_name or size", res.Variables)
	}
}

func TestUnreadableModules(t *testing.T) {
	testCases := []struct {
		name, file, content, wantIn string
	}{
		{"HCL syntax", "broken.tf", "variable \"x\" {\n", "broken.tf:"},
		{"JSON syntax", "broken.tf.json", "{\"variable\": ", "broken.tf.json:"},
		{"not a directory", "", "", "no .tf"},
		{"brackets nesting without end", "deep.tf", "locals {\n  x = " + strings.Repeat("[", 600) + strings.Repeat("]", 600) + "\n}\n", "deep.tf: brackets nest"},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.file != "" {
				dir = writeModule(t, machine, withFile(tc.file, tc.content))
			}
			_, err := Check(dir, Options{Role: machine})
			var unreadable *lint.UnreadableError
			if !errors.As(err, &unreadable) || !strings.Contains(err.Error(), tc.wantIn) {
				t.Fatalf("error %v, want an UnreadableError naming %q", err, tc.wantIn)
			}
		})
	}
}

// The example modules of this repository keep the contract.
func TestExampleModulesLintClean(t *testing.T) {
	for _, role := range contract.Roles {
		dir := filepath.Join("..", "..", "..", "examples", "modules", "noop-"+string(role))
		res, err := Check(dir, Options{Role: role})
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		for _, f := range res.Findings {
			if f.Severity != lint.Info {
				t.Errorf("%s: %s %s %s:%d %s", dir, f.Severity, f.ID, f.File, f.Line, f.Message)
			}
		}
	}
}

// A FIFO named like a module file is refused, not read (which would
// block for ever).
func TestFIFO(t *testing.T) {
	dir := writeModule(t, machine)
	if err := syscall.Mkfifo(filepath.Join(dir, "zz.tf"), 0o644); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	_, err := Check(dir, Options{Role: machine})
	var unreadable *lint.UnreadableError
	if !errors.As(err, &unreadable) || !strings.Contains(err.Error(), "zz.tf is not a regular file") {
		t.Fatalf("error %v, want an UnreadableError naming zz.tf", err)
	}
}

// A syntax error says where, never what the file holds there.
func TestSyntaxErrorQuotesNothing(t *testing.T) {
	dir := writeModule(t, machine, withFile("p.tf.json", `{"provider": {"aws": {"secret_key": sk_live_SUPERSECRET}}}`))
	_, err := Check(dir, Options{Role: machine})
	if err == nil || !strings.Contains(err.Error(), "p.tf.json:1,") || strings.Contains(err.Error(), "SUPERSECRET") {
		t.Fatalf("error %v: want the file and line, and not the file's text", err)
	}
}
