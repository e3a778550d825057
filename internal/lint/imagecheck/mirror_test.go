package imagecheck

import (
	"strings"
	"testing"

	"captf.io/captf/internal/lint"
)

const unpackedRandom = "/captf/providers/registry.opentofu.org/hashicorp/random/3.6.0/linux_amd64/terraform-provider-random_v3.6.0_x5"

// The mirror may be packed or unpacked; a source without a host is looked
// for on the runtime's registry (io.captf.runtime, else the runtime's
// name), a built-in provider is not looked for at all.
func TestMirrorCompleteness(t *testing.T) {
	testCases := []struct {
		name      string
		change    func(*spec)
		providers []string
		missing   []string // files of the providers-complete findings
	}{
		{name: "packed and unpacked", change: func(s *spec) { add(s, file(unpackedRandom, "bin", 0o755)) },
			providers: []string{"hashicorp/null", "registry.opentofu.org/hashicorp/random", "terraform.io/builtin/terraform"}},
		{name: "legacy type-only source", change: func(s *spec) { add(s, file(unpackedRandom, "bin", 0o755)) },
			providers: []string{"random"}},
		{name: "upper case source", providers: []string{"HashiCorp/Null"}},
		{name: "source on another host", providers: []string{"registry.terraform.io/hashicorp/null", "example.com/acme/thing"},
			missing: []string{"/captf/providers/registry.terraform.io/hashicorp/null", "/captf/providers/example.com/acme/thing"}},
		{name: "runtime from the link when unlabelled", change: func(s *spec) { delete(s.labels, labelRuntime) },
			providers: []string{"hashicorp/null", "hashicorp/aws"}, missing: []string{"/captf/providers/registry.opentofu.org/hashicorp/aws"}},
		{name: "terraform from the link when unlabelled", change: func(s *spec) {
			delete(s.labels, labelRuntime)
			add(s, entry{path: "/usr/local/bin/terraform", data: "x", mode: 0o755})
			add(s, symlink("/captf/runtime", "/usr/local/bin/terraform"))
		}, providers: []string{"hashicorp/null"}, missing: []string{"/captf/providers/registry.terraform.io/hashicorp/null"}},
		{name: "unpacked target without the executable", change: func(s *spec) {
			add(s, file("/captf/providers/registry.opentofu.org/hashicorp/random/3.6.0/linux_amd64/README", "x", 0o644))
		}, providers: []string{"hashicorp/random"}, missing: []string{"/captf/providers/registry.opentofu.org/hashicorp/random"}},
		{name: "package for another platform only", change: func(s *spec) {
			add(s, file("/captf/providers/registry.opentofu.org/hashicorp/random/terraform-provider-random_3.6.0_linux_arm64.zip", "PK", 0o644))
		}, providers: []string{"hashicorp/random"}, missing: []string{"/captf/providers/registry.opentofu.org/hashicorp/random"}},
		{name: "link to a package elsewhere in the image", change: func(s *spec) {
			add(s, file("/opt/cache/random.zip", "PK", 0o644))
			add(s, symlink("/captf/providers/registry.opentofu.org/hashicorp/random/terraform-provider-random_3.6.0_linux_amd64.zip", "/opt/cache/random.zip"))
		}, providers: []string{"hashicorp/random"}},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			s := clean()
			if tc.change != nil {
				tc.change(&s)
			}
			findings, _, _ := check(t, s, ModuleFacts{Providers: tc.providers})
			var missing []string
			for _, f := range findings {
				if f.ID == "image/providers-complete" {
					missing = append(missing, f.File)
				}
			}
			if strings.Join(missing, " ") != strings.Join(tc.missing, " ") {
				t.Errorf("providers-complete at %v, want %v; all: %+v", missing, tc.missing, findings)
			}
		})
	}
}

// A mirror full of strays gives at most ten findings of one ID, and one
// that counts the rest.
func TestMirrorFindingsCapped(t *testing.T) {
	s := clean()
	for i := range 25 {
		add(&s, file("/captf/providers/stray"+strings.Repeat("x", i), "x", 0o644))
	}
	findings, _, _ := check(t, s, nullProvider)
	var layout []lint.Finding
	for _, f := range findings {
		if f.ID == "image/providers-layout" {
			layout = append(layout, f)
		}
	}
	if len(layout) != 11 || !strings.HasPrefix(layout[10].Message, "15 more entries") || layout[10].Severity != lint.Error {
		t.Fatalf("layout findings %+v, want 10 and one counting 15 more", layout)
	}
}

// The user's groups count: a file readable by a group /etc/group lists
// the user in is readable; by another group, it is not.
func TestReadableByGroup(t *testing.T) {
	for _, tc := range []struct {
		user, groups string
		want         bool
	}{
		{user: "captf", groups: "root:x:0:\ncaptf:x:65532:\nmirror:x:700:captf\n", want: false},
		{user: "captf", groups: "root:x:0:\ncaptf:x:65532:\nmirror:x:700:someone\n", want: true},
		{user: "65532:700", groups: "root:x:0:\n", want: false},
		{user: "1000", groups: "root:x:0:\n", want: true},
	} {
		s := clean()
		s.user = tc.user
		add(&s, file("/etc/group", tc.groups, 0o644))
		add(&s, entry{path: nullZip, data: "PK", mode: 0o640, uid: 0, gid: 700})
		findings, _, _ := check(t, s, nullProvider)
		if _, got := find(findings, "image/module-readable", "/captf/providers"); got != tc.want {
			t.Errorf("user %s, groups %q: unreadable %v, want %v (%+v)", tc.user, tc.groups, got, tc.want, findings)
		}
		if got := serious(findings); len(got) > 1 || len(got) == 1 && got[0].ID != "image/module-readable" {
			t.Errorf("user %s: findings %+v", tc.user, got)
		}
	}
}
