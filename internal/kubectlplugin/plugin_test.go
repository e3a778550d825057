package kubectlplugin_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"captf.io/captf/internal/kubectlplugin"
	"captf.io/captf/internal/test/envtest"
	"captf.io/captf/pkg/state"
)

var env *envtest.Env

func TestMain(m *testing.M) {
	os.Exit(envtest.Main(m, &env, envtest.Options{}))
}

// storeState stores raw the way the kubernetes backend does: gzip, cut
// into pieces of at most chunk bytes, base Secret then -part-N.
func storeState(t *testing.T, ns, kind, name string, raw []byte, chunk int) []int {
	t.Helper()
	suffix, err := state.Suffix(ns, kind, name)
	if err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	_, _ = w.Write(raw)
	_ = w.Close()
	data := gz.Bytes()
	var sizes []int
	for i := 0; len(data) > 0; i++ {
		n := min(chunk, len(data))
		secretName := state.SecretName(suffix)
		if i > 0 {
			secretName = state.ChunkName(suffix, i)
		}
		labels := map[string]string{"tfstate": "true", "tfstateSecretSuffix": suffix, "tfstateWorkspace": "default"}
		sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: secretName, Namespace: ns, Labels: labels}, Data: map[string][]byte{"tfstate": data[:n]}}
		if err := env.Client.Create(context.Background(), sec); err != nil {
			t.Fatal(err)
		}
		sizes, data = append(sizes, n), data[n:]
	}
	return sizes
}

func kubectlCaptf(t *testing.T, args ...string) (string, error) {
	t.Helper()
	kc, err := env.ControlPlane.AdminKubeconfig()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, kc, 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	cmd := kubectlplugin.NewCommand(kubectlplugin.Streams{Out: &out, ErrOut: &errOut})
	cmd.SetArgs(append([]string{"--kubeconfig", path}, args...))
	err = cmd.ExecuteContext(context.Background())
	return out.String(), err
}

const stateJSON = `{"version":4,"terraform_version":"1.8.5","serial":7,"lineage":"abc",` +
	`"outputs":{"token":{"value":"t0ken-value-123","type":"string","sensitive":true},"ip":{"value":"10.0.0.5","type":"string"}},` +
	`"resources":[{"mode":"managed","type":"null_resource","name":"x","provider":"provider[\"registry.terraform.io/hashicorp/null\"]","instances":[]}],"check_results":null}` + "\n"

func TestStateShowPrintsTheStateWithSensitiveOutputsMasked(t *testing.T) {
	envtest.Require(t, env)
	storeState(t, "default", "TerraformMachine", "show-me", []byte(stateJSON), 1<<20)
	out, err := kubectlCaptf(t, "state", "show", "tfm/show-me", "-n", "default")
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Replace(stateJSON, `"t0ken-value-123"`, `"(sensitive)"`, 1); out != want {
		t.Errorf("state show printed\n%s\nwant\n%s", out, want)
	}
	out, err = kubectlCaptf(t, "state", "show", "TerraformMachine/show-me", "-n", "default", "--show-sensitive")
	if err != nil || out != stateJSON {
		t.Errorf("state show --show-sensitive printed %q (%v), want the state byte for byte", out, err)
	}
}

func TestStateSizeListsEverySecret(t *testing.T) {
	envtest.Require(t, env)
	// Incompressible padding makes the state span three pieces.
	rng := rand.New(rand.NewPCG(1, 2))
	pad := make([]byte, 150000)
	for i := range pad {
		pad[i] = "abcdefghijklmnopqrstuvwxyz0123456789"[rng.IntN(36)]
	}
	big := strings.Replace(stateJSON, `"lineage":"abc"`, `"lineage":"`+string(pad)+`"`, 1)
	sizes := storeState(t, "default", "TerraformCluster", "big", []byte(big), 40000)
	if len(sizes) < 3 {
		t.Fatalf("the fixture spans %d Secrets, want 3 or more", len(sizes))
	}
	out, err := kubectlCaptf(t, "state", "size", "tfc/big", "-n", "default")
	if err != nil {
		t.Fatal(err)
	}
	suffix, _ := state.Suffix("default", "TerraformCluster", "big")
	total := 0
	for i, n := range sizes {
		name := state.SecretName(suffix)
		if i > 0 {
			name = state.ChunkName(suffix, i)
		}
		total += n
		if !strings.Contains(out, name) {
			t.Errorf("the output lacks %s:\n%s", name, out)
		}
	}
	for _, want := range []string{"SECRET", "BYTES", "HEADROOM", "Total: ", "Written by: Terraform 1.8.5"} {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(out, "Total: "+strconv.Itoa(total)+" bytes compressed in "+strconv.Itoa(len(sizes))+" Secret(s); headroom to 1 MiB: "+strconv.Itoa(1<<20-total)) {
		t.Errorf("wrong total line:\n%s", out)
	}
}

func TestBadTargetsAreRefusedClearly(t *testing.T) {
	envtest.Require(t, env)
	for arg, want := range map[string]string{
		"tfm":               "is not <kind>/<name>",
		"pods/x":            `kind "pods" is not a CAPTF workload kind`,
		"tfmp/never-exists": "has no state Secret",
	} {
		if _, err := kubectlCaptf(t, "state", "size", arg, "-n", "default"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("state size %s: %v, want an error naming %q", arg, err, want)
		}
	}
}
