package state

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestHCLMapInRuntimes hands HCLMap's output to the real tofu and terraform
// binaries and checks they read back the same map: the runner passes it to
// them as -backend-config=labels=<map>, parsed the way console parses an
// expression. The binaries come from $CAPTF_TOOLS (make -s tools-dir).
func TestHCLMapInRuntimes(t *testing.T) {
	tools := os.Getenv("CAPTF_TOOLS")
	testCases := []struct {
		name   string
		labels map[string]string
	}{
		{name: "owner labels", labels: OwnerLabels(KindMachine, "m1", "prod")},
		{name: "hashed names", labels: OwnerLabels(KindMachinePool, strings.Repeat("n", 80), strings.Repeat("c", 70))},
		{name: "escapes", labels: map[string]string{
			"quotes": `say "hi" \o/`, "templates": "${x} %{y} $$ $${z} %%{w}", "controls": "a\tb\nc\x01", "unicode": "é✓",
		}},
	}
	for _, bin := range []string{"tofu", "terraform"} {
		path := filepath.Join(tools, "bin", bin)
		if _, err := os.Stat(path); tools == "" || err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("FAIL: %s not found in CAPTF_TOOLS %q", bin, tools)
			}
			t.Skipf("SKIP (not in CI): %s not found in CAPTF_TOOLS %q", bin, tools)
		}
		for _, tc := range testCases {
			m := tc.labels
			t.Run(bin+" "+tc.name, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				cmd := exec.CommandContext(ctx, path, "console")
				cmd.Dir = t.TempDir()
				cmd.Env = append(os.Environ(), "TF_CLI_CONFIG_FILE=/dev/null", "CHECKPOINT_DISABLE=1")
				cmd.Stdin = strings.NewReader("jsonencode(" + HCLMap(m) + ")\n")
				out, err := cmd.Output()
				if err != nil {
					t.Fatalf("%s console: %v", bin, err)
				}
				// console prints the JSON as a quoted string.
				var js string
				if err := json.Unmarshal([]byte(strings.TrimSpace(string(out))), &js); err != nil {
					t.Fatalf("%s console printed %q: %v", bin, out, err)
				}
				var got map[string]string
				if err := json.Unmarshal([]byte(js), &got); err != nil {
					t.Fatalf("%s read %s: %v", bin, js, err)
				}
				if len(got) != len(m) {
					t.Errorf("%s read %d labels, want %d", bin, len(got), len(m))
				}
				for k, v := range m {
					if got[k] != v {
						t.Errorf("%s read label %q = %q, want %q", bin, k, got[k], v)
					}
				}
			})
		}
	}
}
