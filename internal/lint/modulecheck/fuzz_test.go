package modulecheck

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"captf.io/captf/internal/lint"
	"captf.io/captf/pkg/contract"
)

// FuzzCheck feeds arbitrary bytes to the module reader as a .tf or a
// .tf.json file: a module that cannot be read gives an UnreadableError
// naming the file, never a panic.
func FuzzCheck(f *testing.F) {
	for _, m := range cleanModules {
		f.Add([]byte(m), false)
	}
	f.Add([]byte("variable \"x\" {\n"), false)
	f.Add([]byte(`{"variable": {"captf_tags": {"type": "map(string)"}}, "output": {"health": {"value": {"state": "running"}}}}`), true)
	f.Add([]byte(`{"terraform": [{"backend": [{"s3": [{}]}]}]}`), true)
	f.Add([]byte("output \"provider_id_list\" { value = sort([for i in x : i if i.state[\"health\"]]) }\nresource \"a_b\" \"c\" {\n  lifecycle {\n    ignore_changes = [a[0].b, \"c\"]\n  }\n}\n"), false)
	f.Add([]byte("provider \"p\" {\n  x = { token = \"${1}\" }\n  y = [{ secret = \"s\" }]\n}\nmodule \"m\" {\n  source = \".\"\n}\n"), false)
	f.Fuzz(func(t *testing.T, content []byte, asJSON bool) {
		name := "main.tf"
		if asJSON {
			name = "main.tf.json"
		}
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, name), content, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, role := range contract.Roles {
			res, err := Check(dir, Options{Role: role})
			if err != nil {
				var unreadable *lint.UnreadableError
				if !errors.As(err, &unreadable) || !strings.Contains(err.Error(), name) {
					t.Fatalf("error %q is not an UnreadableError naming %s", err, name)
				}
				continue
			}
			for _, f := range res.Findings {
				if f.ID == "" || f.Message == "" || severities[f.ID] == "" {
					t.Fatalf("finding %+v has no known ID or no message", f)
				}
			}
		}
	})
}
