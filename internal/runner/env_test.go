package runner

import (
	"slices"
	"strings"
	"testing"
)

func TestRewriteEnv(t *testing.T) {
	testCases := []struct {
		name            string
		environ         []string
		providersMirror bool
		wantEnv         []string
		wantDropped     []string
		wantTmpdir      string
		wantDefaulted   bool
	}{
		{
			// module-author §4.2, worked example.
			name: "worked example of the Job environment page",
			environ: []string{
				"TF_IN_AUTOMATION=1", "TF_INPUT=0", "KUBE_NAMESPACE=default", "CHECKPOINT_DISABLE=1",
				"TF_LOG=DEBUG", "TF_VAR_region=eu-west-1", "TF_WORKSPACE=default",
				"TF_CLI_ARGS_apply=-parallelism=1", "KUBE_CONFIG_PATH=/root/.kube/config",
				"HOME=/root", "TMPDIR=/tmp", "AWS_ACCESS_KEY_ID=AKIAEXAMPLE",
			},
			wantEnv: []string{
				"AWS_ACCESS_KEY_ID=AKIAEXAMPLE", "CHECKPOINT_DISABLE=1", "HOME=/captf/work",
				"KUBE_NAMESPACE=default", "TF_DATA_DIR=/captf/work/.terraform", "TF_INPUT=0",
				"TF_IN_AUTOMATION=1", "TMPDIR=/tmp",
			},
			wantDropped: []string{"KUBE_CONFIG_PATH", "TF_CLI_ARGS_apply", "TF_LOG", "TF_VAR_region", "TF_WORKSPACE"},
			wantTmpdir:  "/tmp",
		},
		{
			name:            "a provider mirror points TF_CLI_CONFIG_FILE at the runner's cli.tfrc",
			environ:         []string{"TMPDIR=/tmp", "TF_CLI_CONFIG_FILE=/etc/evil.tfrc"},
			providersMirror: true,
			wantEnv: []string{
				"HOME=/captf/work", "TF_CLI_CONFIG_FILE=/captf/work/cli.tfrc",
				"TF_DATA_DIR=/captf/work/.terraform", "TMPDIR=/tmp",
			},
			wantDropped: []string{"TF_CLI_CONFIG_FILE"},
			wantTmpdir:  "/tmp",
		},
		{
			name:        "without a mirror an inherited TF_CLI_CONFIG_FILE is dropped, not kept",
			environ:     []string{"TMPDIR=/tmp", "TF_CLI_CONFIG_FILE=/etc/evil.tfrc"},
			wantEnv:     []string{"HOME=/captf/work", "TF_DATA_DIR=/captf/work/.terraform", "TMPDIR=/tmp"},
			wantDropped: []string{"TF_CLI_CONFIG_FILE"},
			wantTmpdir:  "/tmp",
		},
		{
			name:          "TMPDIR unset defaults under the workdir",
			environ:       []string{"PATH=/usr/bin"},
			wantEnv:       []string{"HOME=/captf/work", "PATH=/usr/bin", "TF_DATA_DIR=/captf/work/.terraform", "TMPDIR=/captf/work/tmp"},
			wantDropped:   []string{},
			wantTmpdir:    "/captf/work/tmp",
			wantDefaulted: true,
		},
		{
			name:          "TMPDIR set but empty defaults under the workdir",
			environ:       []string{"TMPDIR="},
			wantEnv:       []string{"HOME=/captf/work", "TF_DATA_DIR=/captf/work/.terraform", "TMPDIR=/captf/work/tmp"},
			wantDropped:   []string{},
			wantTmpdir:    "/captf/work/tmp",
			wantDefaulted: true,
		},
		{
			name: "inherited TF_DATA_DIR and TF_PLUGIN_CACHE_DIR never reach the runtime",
			environ: []string{
				"TMPDIR=/scratch", "TF_DATA_DIR=/elsewhere", "TF_PLUGIN_CACHE_DIR=/captf/providers",
			},
			providersMirror: true,
			wantEnv: []string{
				"HOME=/captf/work", "TF_CLI_CONFIG_FILE=/captf/work/cli.tfrc",
				"TF_DATA_DIR=/captf/work/.terraform", "TMPDIR=/scratch",
			},
			wantDropped: []string{"TF_DATA_DIR", "TF_PLUGIN_CACHE_DIR"},
			wantTmpdir:  "/scratch",
		},
		{
			name: "duplicated names: the last one wins, a dropped name is listed once",
			environ: []string{
				"TMPDIR=/tmp", "REGION=us-east-1", "REGION=eu-west-1", "TF_LOG=TRACE", "TF_LOG=DEBUG",
				"KUBE_NAMESPACE=first", "KUBE_NAMESPACE=second",
			},
			wantEnv: []string{
				"HOME=/captf/work", "KUBE_NAMESPACE=second", "REGION=eu-west-1",
				"TF_DATA_DIR=/captf/work/.terraform", "TMPDIR=/tmp",
			},
			wantDropped: []string{"TF_LOG"},
			wantTmpdir:  "/tmp",
		},
		{
			name:        "prefixes are case-sensitive and need the underscore",
			environ:     []string{"TMPDIR=/tmp", "tf_log=x", "TFX=1", "KUBECONFIG=/k", "KUBE_TOKEN=t"},
			wantEnv:     []string{"HOME=/captf/work", "KUBECONFIG=/k", "TFX=1", "TF_DATA_DIR=/captf/work/.terraform", "TMPDIR=/tmp", "tf_log=x"},
			wantDropped: []string{"KUBE_TOKEN"},
			wantTmpdir:  "/tmp",
		},
		{
			name:        "values keep their '=' and entries without a name are discarded",
			environ:     []string{"TMPDIR=/tmp", "OPTS=a=b=c", "=weird", "NOEQUALS", "TF_VAR_x"},
			wantEnv:     []string{"HOME=/captf/work", "OPTS=a=b=c", "TF_DATA_DIR=/captf/work/.terraform", "TMPDIR=/tmp"},
			wantDropped: []string{},
			wantTmpdir:  "/tmp",
		},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			got := RewriteEnv(tc.environ, "/captf/work", tc.providersMirror)
			if !slices.Equal(got.Env, tc.wantEnv) {
				t.Errorf("Env:\n got %q\nwant %q", got.Env, tc.wantEnv)
			}
			if !slices.Equal(got.Dropped, tc.wantDropped) {
				t.Errorf("Dropped: got %q, want %q", got.Dropped, tc.wantDropped)
			}
			if got.Tmpdir != tc.wantTmpdir || got.TmpdirDefaulted != tc.wantDefaulted {
				t.Errorf("TMPDIR: got %q (defaulted %v), want %q (defaulted %v)",
					got.Tmpdir, got.TmpdirDefaulted, tc.wantTmpdir, tc.wantDefaulted)
			}
		})
	}
}

func FuzzRewriteEnv(f *testing.F) {
	f.Add("TF_LOG=DEBUG\nHOME=/root\nKUBE_NAMESPACE=ns\nTF_VAR_x=TF_VAR_x", true)
	f.Add("TF_DATA_DIR=/x\nTF_CLI_CONFIG_FILE=/y\nTMPDIR=\nA=B=C", false)
	f.Add("=\n==\nTF_\nKUBE_=1\nTF_INPUT=0", true)
	f.Fuzz(func(t *testing.T, joined string, mirror bool) {
		environ := strings.Split(joined, "\n")
		got := RewriteEnv(environ, "/captf/work", mirror)

		inputNames := map[string]bool{}
		for _, e := range environ {
			if name, _, ok := strings.Cut(e, "="); ok {
				inputNames[name] = true
			}
		}
		seen := map[string]bool{}
		for _, e := range got.Env {
			name, value, ok := strings.Cut(e, "=")
			if !ok || name == "" {
				t.Fatalf("malformed output entry %q", e)
			}
			if seen[name] {
				t.Fatalf("name %q twice in output", name)
			}
			seen[name] = true
			switch name {
			case "HOME":
				if value != "/captf/work" {
					t.Fatalf("HOME=%q", value)
				}
			case "TF_DATA_DIR":
				if value != "/captf/work/.terraform" {
					t.Fatalf("TF_DATA_DIR=%q", value)
				}
			case "TF_CLI_CONFIG_FILE":
				if !mirror || value != "/captf/work/cli.tfrc" {
					t.Fatalf("TF_CLI_CONFIG_FILE=%q with mirror=%v", value, mirror)
				}
			case "TF_IN_AUTOMATION", "TF_INPUT", "KUBE_NAMESPACE":
			default:
				if strings.HasPrefix(name, "TF_") || strings.HasPrefix(name, "KUBE_") {
					t.Fatalf("runner-owned name %q passed through", name)
				}
			}
		}
		for _, name := range []string{"HOME", "TF_DATA_DIR", "TMPDIR"} {
			if !seen[name] {
				t.Fatalf("%s missing from output", name)
			}
		}
		if mirror != seen["TF_CLI_CONFIG_FILE"] {
			t.Fatalf("TF_CLI_CONFIG_FILE present=%v with mirror=%v", seen["TF_CLI_CONFIG_FILE"], mirror)
		}
		if !sortedByName(got.Env) {
			t.Fatalf("output not sorted: %q", got.Env)
		}
		if !slices.IsSorted(got.Dropped) || len(slices.Compact(slices.Clone(got.Dropped))) != len(got.Dropped) {
			t.Fatalf("dropped not sorted and unique: %q", got.Dropped)
		}
		// Dropped holds names only: each is the name of an input entry,
		// never a value or a whole NAME=value entry.
		for _, d := range got.Dropped {
			if strings.Contains(d, "=") || !inputNames[d] {
				t.Fatalf("dropped %q is not an input name", d)
			}
			if seen[d] && d != "TF_DATA_DIR" && d != "TF_CLI_CONFIG_FILE" {
				t.Fatalf("dropped %q still in output", d)
			}
		}
	})
}

func sortedByName(env []string) bool {
	return slices.IsSortedFunc(env, func(a, b string) int {
		an, _, _ := strings.Cut(a, "=")
		bn, _, _ := strings.Cut(b, "=")
		return strings.Compare(an, bn)
	})
}
