package imagecheck

import (
	"encoding/json"
	"strings"
	"testing"

	"captf.io/captf/internal/lint"
	"captf.io/captf/pkg/contract"
)

// The clean image gives no error and no warning; the module checks see
// its module extracted (a submodule included) and their findings come
// back with image paths.
func TestCleanImage(t *testing.T) {
	facts := nullProvider
	facts.Findings = []lint.Finding{
		{ID: "module/version", Severity: lint.Info, File: lint.Whole, Message: "no required_version"},
		{ID: "input/default", Severity: lint.Warning, File: "variables.tf", Line: 3, Message: "has a default"},
	}
	findings, desc, saw := check(t, clean(), facts)
	for _, f := range serious(findings) {
		if f.ID != "input/default" {
			t.Errorf("clean image: %s %s %s: %s", f.Severity, f.ID, f.File, f.Message)
		}
	}
	if saw["main.tf"] != moduleMain || saw["modules/net/main.tf"] != "# submodule\n" || len(saw) != 2 {
		t.Errorf("the module checks saw %v, want main.tf and modules/net/main.tf", saw)
	}
	if f, ok := find(findings, "input/default", "/captf/module/variables.tf"); !ok || f.Line != 3 || f.Severity != lint.Warning {
		t.Errorf("module finding not reported at its image path: %+v", findings)
	}
	if _, ok := find(findings, "module/version", "/captf/module"); !ok {
		t.Errorf("whole-module finding not reported at /captf/module: %+v", findings)
	}
	if out, err := json.Marshal(desc); err != nil || !strings.Contains(string(out), `"platform":"linux/amd64"`) {
		t.Errorf("description as JSON: %s, %v", out, err)
	}
	if len(desc.Images) != 1 || desc.Images[0].Platform != "linux/amd64" || desc.Images[0].User != "65532:65532" ||
		desc.Images[0].Labels[labelRole] != "machine" || !strings.HasPrefix(desc.Digest, "sha256:") {
		t.Errorf("description %+v", desc)
	}
}

// Each check finds what breaks it: its ID, severity and file.
func TestChecks(t *testing.T) {
	testCases := []struct {
		name     string
		change   func(*spec)
		facts    ModuleFacts
		role     contract.Role
		id, file string
		severity lint.Severity
	}{
		{name: "no module", change: func(s *spec) { delTree(s, "/captf/module") },
			id: "image/module-present", severity: lint.Error, file: "/captf/module"},
		{name: "module files only in a subdirectory", change: func(s *spec) {
			del(s, "/captf/module/main.tf")
			add(s, file("/captf/module/README.md", "hi", 0o644))
		}, id: "image/module-present", severity: lint.Error, file: "/captf/module"},
		{name: "module link out of the module", change: func(s *spec) { add(s, symlink("/captf/module/extra.tf", "/etc/passwd")) },
			id: "image/module-link", severity: lint.Error, file: "/captf/module/extra.tf"},
		{name: "module link escaping by dots", change: func(s *spec) { add(s, symlink("/captf/module/extra.tf", "../../../etc/passwd")) },
			id: "image/module-link", severity: lint.Error, file: "/captf/module/extra.tf"},
		{name: "module link to a directory", change: func(s *spec) { add(s, symlink("/captf/module/shared", "modules/net")) },
			id: "image/module-link", severity: lint.Error, file: "/captf/module/shared"},
		{name: "broken module link", change: func(s *spec) { add(s, symlink("/captf/module/gone.tf", "nowhere.tf")) },
			id: "image/module-link", severity: lint.Error, file: "/captf/module/gone.tf"},
		{name: "module is a link", change: func(s *spec) {
			for p, e := range s.base {
				if strings.HasPrefix(p, "/captf/module") {
					del(s, p)
					e.path = "/opt" + strings.TrimPrefix(p, "/captf")
					add(s, e)
				}
			}
			add(s, symlink("/captf/module", "/opt/module"))
		}, id: "image/module-link", severity: lint.Error, file: "/captf/module"},
		{name: "module file unreadable", change: func(s *spec) { add(s, entry{path: "/captf/module/main.tf", data: moduleMain, mode: 0o600}) },
			id: "image/module-readable", severity: lint.Warning, file: "/captf/module"},
		{name: "module directory not traversable", change: func(s *spec) { add(s, entry{path: "/captf/module/modules", dir: true, mode: 0o700}) },
			id: "image/module-readable", severity: lint.Warning, file: "/captf/module"},
		{name: "mirror file unreadable", change: func(s *spec) { add(s, entry{path: nullZip, data: "PK", mode: 0o640, gid: 7}) },
			facts: nullProvider, id: "image/module-readable", severity: lint.Warning, file: "/captf/providers"},
		{name: "no runtime", change: func(s *spec) { del(s, "/captf/runtime") },
			id: "image/runtime-present", severity: lint.Error, file: "/captf/runtime"},
		{name: "runtime not executable", change: func(s *spec) { add(s, entry{path: "/usr/local/bin/tofu", data: "x", mode: 0o744}) },
			id: "image/runtime-present", severity: lint.Error, file: "/captf/runtime"},
		{name: "runtime link broken", change: func(s *spec) { del(s, "/usr/local/bin/tofu") },
			id: "image/runtime-present", severity: lint.Error, file: "/captf/runtime"},
		{name: "runtime link loops", change: func(s *spec) { add(s, symlink("/usr/local/bin/tofu", "/captf/runtime")) },
			id: "image/runtime-present", severity: lint.Error, file: "/captf/runtime"},
		{name: "runtime a directory", change: func(s *spec) { del(s, "/captf/runtime"); add(s, dir("/captf/runtime", 0o755)) },
			id: "image/runtime-present", severity: lint.Error, file: "/captf/runtime"},
		{name: "runtime label says terraform", change: func(s *spec) { s.labels[labelRuntime] = "terraform" },
			id: "image/runtime-version", severity: lint.Warning, file: "/captf/runtime"},
		{name: "file under /captf/work", change: func(s *spec) { add(s, file("/captf/work/cache", "x", 0o644)) },
			id: "image/reserved-paths", severity: lint.Error, file: "/captf/work"},
		{name: "file under /captf/bin", change: func(s *spec) { add(s, file("/captf/bin/runner", "x", 0o755)) },
			id: "image/reserved-paths", severity: lint.Error, file: "/captf/bin"},
		{name: "/captf/config is a file", change: func(s *spec) { add(s, file("/captf/config", "x", 0o644)) },
			id: "image/reserved-paths", severity: lint.Error, file: "/captf/config"},
		{name: "credentials through the /var/run link", change: func(s *spec) {
			add(s, symlink("/var/run", "/run"))
			add(s, file("/run/captf/credentials/token", "x", 0o600))
		}, id: "image/reserved-paths", severity: lint.Error, file: "/var/run/captf/credentials"},
		{name: "entrypoint", change: func(s *spec) { s.entrypoint = []string{"/captf/runtime"} },
			id: "image/entrypoint", severity: lint.Info, file: lint.Whole},
		{name: "windows image", change: func(s *spec) { s.os = "windows" },
			id: "image/platform", severity: lint.Error, file: lint.Whole},
		{name: "no mirror", change: func(s *spec) { delTree(s, "/captf/providers") }, facts: nullProvider,
			id: "image/providers-absent", severity: lint.Info, file: "/captf/providers"},
		{name: "stray file in the mirror", change: func(s *spec) { add(s, file("/captf/providers/README", "x", 0o644)) },
			id: "image/providers-layout", severity: lint.Error, file: "/captf/providers/README"},
		{name: "misnamed archive", change: func(s *spec) {
			add(s, file("/captf/providers/registry.opentofu.org/hashicorp/null/null_3.2.4_linux_amd64.zip", "PK", 0o644))
		}, id: "image/providers-layout", severity: lint.Error, file: "/captf/providers/registry.opentofu.org/hashicorp/null/null_3.2.4_linux_amd64.zip"},
		{name: "index that does not parse", change: func(s *spec) {
			add(s, file("/captf/providers/registry.opentofu.org/hashicorp/null/index.json", "{secret", 0o644))
		}, id: "image/providers-layout", severity: lint.Error, file: "/captf/providers/registry.opentofu.org/hashicorp/null/index.json"},
		{name: "unpacked target without executable", change: func(s *spec) {
			add(s, dir("/captf/providers/registry.opentofu.org/hashicorp/random/3.6.0/linux_amd64", 0o755))
		}, id: "image/providers-layout", severity: lint.Error, file: "/captf/providers/registry.opentofu.org/hashicorp/random/3.6.0/linux_amd64"},
		{name: "provider missing", facts: ModuleFacts{Providers: []string{"hashicorp/null", "hashicorp/random"}},
			id: "image/providers-complete", severity: lint.Error, file: "/captf/providers/registry.opentofu.org/hashicorp/random"},
		{name: "terraform runtime looks on its registry", change: func(s *spec) {
			s.labels[labelRuntime] = "terraform"
			add(s, entry{path: "/usr/local/bin/terraform", data: "x", mode: 0o755})
			add(s, symlink("/captf/runtime", "/usr/local/bin/terraform"))
		}, facts: nullProvider, id: "image/providers-complete", severity: lint.Error, file: "/captf/providers/registry.terraform.io/hashicorp/null"},
		{name: "index names a missing archive", change: func(s *spec) { del(s, nullZip) },
			id: "image/providers-complete", severity: lint.Error, file: "/captf/providers/registry.opentofu.org/hashicorp/null/3.2.4.json"},
		{name: "broken link in the mirror", change: func(s *spec) {
			add(s, symlink("/captf/providers/registry.opentofu.org/hashicorp/null/terraform-provider-null_3.2.4_linux_arm64.zip", "/cache/gone.zip"))
		}, id: "image/providers-complete", severity: lint.Error, file: "/captf/providers/registry.opentofu.org/hashicorp/null/terraform-provider-null_3.2.4_linux_arm64.zip"},
		{name: "no role label", change: func(s *spec) { delete(s.labels, labelRole) },
			id: "image/label-role", severity: lint.Info, file: lint.Whole},
		{name: "other role label", change: func(s *spec) { s.labels[labelRole] = "cluster" },
			id: "image/label-role", severity: lint.Error, file: lint.Whole},
		{name: "no contract label", change: func(s *spec) { delete(s.labels, labelContract) },
			id: "image/label-contract", severity: lint.Info, file: lint.Whole},
		{name: "other contract label", change: func(s *spec) { s.labels[labelContract] = "v1alpha2" },
			id: "image/label-contract", severity: lint.Warning, file: lint.Whole},
		{name: "no capacity label", change: func(s *spec) { delete(s.labels, labelCapacity) },
			id: "image/label-capacity", severity: lint.Info, file: lint.Whole},
		{name: "capacity not JSON", change: func(s *spec) { s.labels[labelCapacity] = "cpu=2" },
			id: "image/label-capacity", severity: lint.Error, file: lint.Whole},
		{name: "capacity quantity bad", change: func(s *spec) { s.labels[labelCapacity] = `{"cpu":"two"}` },
			id: "image/label-capacity", severity: lint.Error, file: lint.Whole},
		{name: "capacity resource name bad", change: func(s *spec) { s.labels[labelCapacity] = `{"nvidia.com/gpu/x":"1"}` },
			id: "image/label-capacity", severity: lint.Error, file: lint.Whole},
		{name: "node-info architecture bad", change: func(s *spec) { s.labels[labelNodeInfo] = `{"architecture":"x86_64"}` },
			id: "image/label-capacity", severity: lint.Error, file: lint.Whole},
		{name: "node-info empty", change: func(s *spec) { s.labels[labelNodeInfo] = `{}` },
			id: "image/label-capacity", severity: lint.Error, file: lint.Whole},
		{name: "capacity on a cluster image", role: contract.RoleCluster, change: func(s *spec) { s.labels[labelRole] = "cluster" },
			id: "image/label-capacity", severity: lint.Info, file: lint.Whole},
		{name: "no user", change: func(s *spec) { s.user = "" },
			id: "image/user-root", severity: lint.Warning, file: lint.Whole},
		{name: "root by name", change: func(s *spec) { s.user = "root" },
			id: "image/user-root", severity: lint.Warning, file: lint.Whole},
		{name: "uid 0 with a group", change: func(s *spec) { s.user = "0:65532" },
			id: "image/user-root", severity: lint.Warning, file: lint.Whole},
		{name: "unknown user name", change: func(s *spec) { s.user = "tofu" },
			id: "image/user-unresolved", severity: lint.Warning, file: lint.Whole},
		{name: "unknown group name", change: func(s *spec) { s.user = "65532:wheel" },
			id: "image/user-unresolved", severity: lint.Warning, file: lint.Whole},
		{name: "no /etc/passwd for a name", change: func(s *spec) { del(s, "/etc/passwd"); s.user = "captf" },
			id: "image/user-unresolved", severity: lint.Warning, file: lint.Whole},
		{name: "capacity and a size variable", facts: ModuleFacts{Providers: []string{"hashicorp/null"}, Variables: []string{"machine_name", "instance_type"}},
			id: "image/capacity-size-variable", severity: lint.Warning, file: lint.Whole},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			s := clean()
			if tc.change != nil {
				tc.change(&s)
			}
			role := tc.role
			if role == "" {
				role = contract.RoleMachine
			}
			findings, _, _ := check(t, s, tc.facts, func(o *Options) { o.Role = role })
			f, ok := find(findings, tc.id, tc.file)
			if !ok || f.Severity != tc.severity {
				t.Fatalf("want %s %s at %s, got %+v", tc.severity, tc.id, tc.file, findings)
			}
			if f.Line != 0 || f.Message == "" {
				t.Errorf("finding %+v: want line 0 and a message", f)
			}
			for _, f := range findings {
				if strings.Contains(f.Message, "{secret") || strings.Contains(f.Message, "required_version") || strings.Contains(f.Message, "x:65532") {
					t.Errorf("finding %+v prints file contents", f)
				}
			}
		})
	}
}

func add(s *spec, e entry)  { s.base[e.path] = e }
func del(s *spec, p string) { delete(s.base, p) }

func delTree(s *spec, p string) {
	for q := range s.base {
		if q == p || strings.HasPrefix(q, p+"/") {
			delete(s.base, q)
		}
	}
}

// The Job mounts /captf/plan-key and /tmp too, but they are not linted.
func TestPathsNotLinted(t *testing.T) {
	s := clean()
	add(&s, file("/tmp/cache", "x", 0o644))
	add(&s, file("/captf/plan-key/key", "x", 0o600))
	findings, _, _ := check(t, s, nullProvider)
	if got := serious(findings); len(got) != 0 {
		t.Fatalf("findings %+v", got)
	}
}
