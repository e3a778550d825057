// Package runnertest runs a module with the real runner, real OpenTofu or
// Terraform from the tool cache, providers from the mirror, and the real
// kubernetes backend on the test API server: one Fixture is one object's
// image, inputs and state namespace.
package runnertest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"captf.io/captf/internal/runner"
	"captf.io/captf/internal/test/envtest"
	"captf.io/captf/pkg/state"
)

// Runtimes are the runtime binaries of the tool cache.
var Runtimes = []string{"tofu", "terraform"}

// Fixture is one object's image layout (module, runtime, mirror), run
// inputs and state namespace.
type Fixture struct {
	T          testing.TB
	Env        *envtest.Env
	Dir        string
	Namespace  string
	Kind, Name string
	Suffix     string
	Kubeconfig string
	// Opts are the runner options every Run starts from.
	Opts runner.Options
}

// RuntimeBin returns a runtime's path in the tool cache; missing, the test
// fails (the runtimes are part of `make test`'s tools).
func RuntimeBin(t testing.TB, env *envtest.Env, name string) string {
	t.Helper()
	envtest.Require(t, env)
	bin := filepath.Join(env.Tools, "bin", name)
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("FAIL: %s is missing; run `make tools` (or `make test`) to build the runtimes", bin)
	}
	return bin
}

// New lays out an image with the module directory moduleDir (copied) and
// the runtime, in a fresh namespace, for an object of kind named "demo".
func New(t testing.TB, env *envtest.Env, runtime, moduleDir, kind string) *Fixture {
	t.Helper()
	bin := RuntimeBin(t, env, runtime)
	f := &Fixture{T: t, Env: env, Dir: t.TempDir(), Kind: kind, Name: "demo"}
	f.Namespace = "rt-" + randomHex(t, 4)
	if err := env.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: f.Namespace}}); err != nil {
		t.Fatal(err)
	}
	var err error
	if f.Suffix, err = state.Suffix(f.Namespace, kind, f.Name); err != nil {
		t.Fatal(err)
	}
	kc, err := env.ControlPlane.AdminKubeconfig()
	if err != nil {
		t.Fatal(err)
	}
	f.Kubeconfig = filepath.Join(f.Dir, "kubeconfig")
	Write(t, f.Kubeconfig, kc)
	if out, err := exec.Command("cp", "-r", moduleDir, filepath.Join(f.Dir, "module")).CombinedOutput(); err != nil {
		t.Fatalf("copying %s: %v: %s", moduleDir, err, out)
	}
	for _, d := range []string{"config", "work"} {
		if err := os.MkdirAll(filepath.Join(f.Dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	Write(t, filepath.Join(f.Dir, "plan-key"), key)
	f.Opts = runner.Options{
		Bin: []string{bin}, Config: filepath.Join(f.Dir, "config"), Module: filepath.Join(f.Dir, "module"),
		Providers: filepath.Join(env.Tools, "providers"), Workdir: filepath.Join(f.Dir, "work"),
		Image: "local/test:" + runtime, Result: filepath.Join(f.Dir, "result.json"),
		BackendConfig: []string{
			"secret_suffix=" + f.Suffix,
			"namespace=" + f.Namespace,
			"config_path=" + f.Kubeconfig,
			"labels=" + state.HCLMap(state.OwnerLabels(kind, f.Name, f.Name)),
		},
		LockTimeout: 20 * time.Second, StopTimeout: time.Minute,
		PlanKeyFile: filepath.Join(f.Dir, "plan-key"), Credentials: filepath.Join(f.Dir, "credentials"),
	}
	return f
}

// SetInputs writes the run's config files: the generated root and tfvars.
func (f *Fixture) SetInputs(main []byte, tfvars any) {
	f.T.Helper()
	Write(f.T, filepath.Join(f.Opts.Config, runner.MainFile), main)
	Write(f.T, filepath.Join(f.Opts.Config, runner.TfvarsFile), MustJSON(f.T, tfvars))
}

// Run runs the runner in this process and checks the result document it
// wrote (valid JSON of at most 4096 bytes), which it returns.
func (f *Fixture) Run(op string, change func(*runner.Options)) (runner.Result, int) {
	f.T.Helper()
	o := f.Opts
	o.Op = op
	if change != nil {
		change(&o)
	}
	var logs SyncBuffer
	res, code := runner.Run(o, runner.Env{Environ: append(os.Environ(), "TF_LOG=TRACE", "TF_WORKSPACE=other"), Stdout: &logs, Stderr: &logs, Stop: make(chan struct{})})
	if err := runner.WriteResult(o.Result, res); err != nil {
		f.T.Fatal(err)
	}
	written, err := os.ReadFile(o.Result)
	if err != nil || len(written) > runner.MaxResultBytes || !json.Valid(written) {
		f.T.Fatalf("the result document is not valid JSON of at most 4096 bytes (%d bytes, %v)", len(written), err)
	}
	if f.T.Failed() || testing.Verbose() {
		f.T.Logf("runner log of %s:\n%s", op, logs.String())
	}
	return res, code
}

// SyncBuffer is a buffer two goroutines may write at once (a command's
// stdout and stderr copies).
type SyncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns what was written.
func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// StateSecrets lists the object's state Secrets.
func (f *Fixture) StateSecrets() []corev1.Secret {
	f.T.Helper()
	var list corev1.SecretList
	if err := f.Env.Client.List(context.Background(), &list, client.InNamespace(f.Namespace),
		client.MatchingLabelsSelector{Selector: state.Selector(f.Suffix)}); err != nil {
		f.T.Fatal(err)
	}
	return list.Items
}

// StateBytes is the object's compressed state, for before/after checks.
func (f *Fixture) StateBytes() []byte {
	f.T.Helper()
	var all []byte
	for _, s := range f.StateSecrets() {
		all = append(all, s.Data[state.DataKey]...)
	}
	return all
}

// Lock returns the state lock Lease.
func (f *Fixture) Lock() *coordinationv1.Lease {
	f.T.Helper()
	l := &coordinationv1.Lease{}
	if err := f.Env.Client.Get(context.Background(), client.ObjectKey{Namespace: f.Namespace, Name: state.LockLeaseName(f.Suffix)}, l); err != nil {
		f.T.Fatalf("the state lock Lease: %v", err)
	}
	return l
}

// StatePull runs `state pull` with the runtime, in the root the runner
// initialised: what the runtime itself reads back from the backend.
func (f *Fixture) StatePull() []byte {
	f.T.Helper()
	cmd := exec.Command(f.Opts.Bin[0], "state", "pull")
	cmd.Dir = filepath.Join(f.Opts.Workdir, "root")
	cmd.Env = append(os.Environ(), "TF_DATA_DIR="+filepath.Join(f.Opts.Workdir, ".terraform"),
		"TF_CLI_CONFIG_FILE="+filepath.Join(f.Opts.Workdir, "cli.tfrc"), "CHECKPOINT_DISABLE=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		f.T.Fatalf("state pull: %v: %s", err, stderr.String())
	}
	return out
}

// WantReaderMatchesStatePull checks that CAPTF's state reader reads the
// state back byte for byte as the runtime does.
func (f *Fixture) WantReaderMatchesStatePull() {
	f.T.Helper()
	_, raw, err := state.DecodeRaw(f.Suffix, f.StateSecrets())
	if err != nil {
		f.T.Fatalf("the state reader failed: %v", err)
	}
	// state pull prints the stored bytes and a newline of its own.
	if pulled := bytes.TrimSuffix(f.StatePull(), []byte("\n")); !bytes.Equal(raw, pulled) {
		f.T.Errorf("the state reader's JSON (%d bytes) differs from state pull (%d bytes)", len(raw), len(pulled))
	}
}

// StepNames lists a result's step names.
func StepNames(r runner.Result) []string {
	var names []string
	for _, s := range r.Steps {
		names = append(names, s.Name)
	}
	return names
}

// Write writes a file or fails the test.
func Write(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// MustJSON encodes v or fails the test.
func MustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func randomHex(t testing.TB, n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}
