package kubectlplugin_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/kubectlplugin"
	"captf.io/captf/internal/records"
	"captf.io/captf/internal/test/envtest"
	"captf.io/captf/pkg/state"
)

// Values that must never be printed: a credential of the identity's
// mirror and a sensitive input in the tfvars.
const (
	credentialValue = "cred-value-91c4-do-not-print"
	sensitiveInput  = "bootstrap-data-6d2e-do-not-print"
)

// runCaptf runs `kubectl captf` and returns both streams.
func runCaptf(t *testing.T, args ...string) (string, string, error) {
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
	for _, s := range []string{out.String(), errOut.String(), errString(err)} {
		if strings.Contains(s, credentialValue) || strings.Contains(s, sensitiveInput) {
			t.Errorf("kubectl captf %v printed a credential or a sensitive input:\n%s", args, s)
		}
	}
	return out.String(), errOut.String(), err
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// record creates an inputs record Secret of a TerraformMachine or cluster.
func record(t *testing.T, kind, name string, rec records.Record, applied bool) records.Record {
	t.Helper()
	rec.Tfvars = []byte(`{"bootstrap_data":"` + sensitiveInput + `","job":"` + rec.Job + `"}`)
	rec.MainTF = []byte(`{"module":{"role":{"source":"../../module"}},"job":"` + rec.Job + `"}`)
	owner := metav1.OwnerReference{APIVersion: infrav1.GroupVersion.String(), Kind: kind, Name: name, UID: types.UID("uid-" + name)}
	s, err := records.Secret("default", owner, rec, applied)
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Create(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	return rec
}

// baseState creates the base state Secret of an object with an inputs hash.
func baseState(t *testing.T, kind, name, hash string) string {
	t.Helper()
	suffix, err := state.Suffix("default", kind, name)
	if err != nil {
		t.Fatal(err)
	}
	labels := state.OwnerLabels(kind, name, "prod")
	labels[state.LabelState], labels[state.LabelSecretSuffix], labels[state.LabelWorkspace] = "true", suffix, "default"
	labels[state.LabelManagedBy] = "terraform"
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: state.SecretName(suffix), Namespace: "default", Labels: labels,
		Annotations: map[string]string{infrav1.InputsHashAnnotation: hash}}, Data: map[string][]byte{"tfstate": []byte("x")}}
	if err := env.Client.Create(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	return suffix
}

func mustContain(t *testing.T, text string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(text, w) {
			t.Errorf("the output lacks %q:\n%s", w, text)
		}
	}
}

func TestInputsWritesTheRecordADestroyRendersAndHowToRunIt(t *testing.T) {
	envtest.Require(t, env)
	mirror := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "captf-creds-team-a", Namespace: "default"},
		Data: map[string][]byte{"AWS_SECRET_ACCESS_KEY": []byte(credentialValue)}}
	if err := env.Client.Create(context.Background(), mirror); err != nil {
		t.Fatal(err)
	}
	applied := record(t, "TerraformMachine", "web-0", records.Record{Job: "captf-m-web-0-apply-a1-aaaaaa", Image: "registry.example:5000/mod/m:v1",
		ImageDigest: "sha256:feed", Identity: "team-a", InputsHash: "h2:one"}, true)
	// A newer attempt that never applied (blocked): a destroy ignores it.
	record(t, "TerraformMachine", "web-0", records.Record{Job: "captf-m-web-0-apply-a2-bbbbbb", Image: "registry.example:5000/mod/m:v2",
		Identity: "team-a", InputsHash: "h2:two", Applied: true}, false)
	suffix := baseState(t, "TerraformMachine", "web-0", "h2:one")

	dir := filepath.Join(t.TempDir(), "inputs")
	out, _, err := runCaptf(t, "inputs", "tfm/web-0", "-n", "default", "--out", dir)
	if err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(dir)
	if err != nil || info.Mode().Perm() != 0o700 {
		t.Errorf("the directory: %v, mode %v; want 0700", err, info.Mode().Perm())
	}
	for name, want := range map[string][]byte{records.MainFile: applied.MainTF, records.TfvarsFile: applied.Tfvars,
		"work/root/" + records.MainFile: applied.MainTF, "work/root/" + records.TfvarsFile: applied.Tfvars} {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s holds %q (%v), want the applied record's file", name, got, err)
		}
		if info, err := os.Stat(filepath.Join(dir, name)); err != nil || info.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v (%v), want 0600", name, info.Mode().Perm(), err)
		}
	}
	mustContain(t, out,
		"Record:      captf-applied-m-web-0 (applied record: it carries the state's inputs hash)",
		"Job:         captf-m-web-0-apply-a1-aaaaaa", "Inputs hash: h2:one", "State:       tfstate-default-"+suffix+", inputs hash h2:one",
		"Image:       registry.example:5000/mod/m@sha256:feed (pinned by digest)",
		"TerraformClusterIdentity team-a; Jobs receive its credentials from the Secret captf-creds-team-a of namespace default",
		"kubectl get secret captf-creds-team-a -n default -o go-template=",
		"docker run --rm --user \"$(id -u):$(id -g)\" --read-only", "podman run --rm --userns=keep-id --read-only",
		"-v "+dir+":/captf/config:ro -v "+dir+"/work:/captf/work",
		"--env-file "+dir+"/creds.env",
		"-w /captf/work/root --entrypoint /captf/runtime registry.example:5000/mod/m@sha256:feed",
		"init -input=false -no-color -lock-timeout=300s -backend-config=secret_suffix="+suffix+" -backend-config=namespace=default -backend-config=config_path=/captf/kubeconfig",
		`'-backend-config=labels={"captf.infrastructure.cluster.x-k8s.io/owner-kind"="TerraformMachine",`,
		"destroy -input=false -no-color -lock-timeout=300s -auto-approve -var-file=terraform.tfvars.json",
		"#   -e TF_LOG=DEBUG \\\n#   -w /captf/work/root")
	if strings.Contains(out, `"tfstate"=`) || strings.Contains(out, "Warning") {
		t.Errorf("the backend labels hold a backend-owned label, or a warning was printed:\n%s", out)
	}
	if strings.Count(out, "docker run") != 3 || strings.Count(out, "podman run") != 2 {
		t.Errorf("want init and destroy for docker and podman, and a commented debug line:\n%s", out)
	}
}

func TestInputsPicksTheAttemptThatMayHaveApplied(t *testing.T) {
	envtest.Require(t, env)
	record(t, "TerraformCluster", "prod", records.Record{Job: "captf-c-prod-apply-a1-aaaaaa", Image: "registry.example/c:v1", ImageDigest: "sha256:feed", InputsHash: "h2:one"}, true)
	attempt := record(t, "TerraformCluster", "prod", records.Record{Job: "captf-c-prod-apply-a2-bbbbbb", Image: "registry.example/c:v2",
		Identity: "local-creds", IdentityKind: infrav1.IdentityKindSecret, InputsHash: "h2:two", MayHaveApplied: true}, false)
	baseState(t, "TerraformCluster", "prod", "h2:one")

	dir := t.TempDir()
	out, _, err := runCaptf(t, "inputs", "tfc/prod", "-n", "default", "--out", dir)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, records.TfvarsFile)); !bytes.Equal(got, attempt.Tfvars) {
		t.Errorf("wrote the tfvars of another record: %q", got)
	}
	mustContain(t, out,
		"Record:      captf-inputs-c-prod (attempt record: its apply failed after it may have changed resources)",
		"Warning: the record's inputs hash h2:two is not the state's h2:one",
		"Image:       registry.example/c:v2\nWarning: the image is not pinned",
		"Identity:    Secret local-creds of namespace default",
		"kubectl get secret local-creds -n default")
}

func TestInputsWithoutStateOrRecord(t *testing.T) {
	envtest.Require(t, env)
	record(t, "TerraformMachinePool", "pool", records.Record{Job: "captf-mp-pool-apply-a1-aaaaaa", Image: "registry.example/p@sha256:beef", InputsHash: "h2:one"}, false)
	out, _, err := runCaptf(t, "inputs", "tfmp/pool", "-n", "default", "--out", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, out, "Record:      captf-inputs-mp-pool (attempt record: there is no applied record)",
		"Warning: there is no state Secret", "Identity:    none recorded", "Image:       registry.example/p@sha256:beef (pinned by digest)", `"captf.io/managed"="true"`)
	if strings.Contains(out, "--env-file") {
		t.Errorf("a run without identity needs no credentials file:\n%s", out)
	}

	for args, want := range map[string]string{
		"inputs tfm/nothing -n default --out " + t.TempDir(): "a destroy cannot be rendered from recorded inputs; the controller reports DestroyFailed",
		"inputs tfc/nothing -n default --out " + t.TempDir(): "the controller destroys with the object's current inputs instead",
		"inputs tfm/web-0 -n default":                        "--out DIR is required",
	} {
		_, _, err := runCaptf(t, strings.Fields(args)...)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error naming %q", args, err, want)
		}
	}
	_, _, err = runCaptf(t, "inputs", "tfm/nothing", "-n", "default", "--out", t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "spec.deletionPolicy: Retain") || !strings.Contains(err.Error(), "captf-inputs-m-nothing") {
		t.Errorf("the no-record error does not name the record or the way out: %v", err)
	}
}

// TestThePrintedLinesDestroyWithTheRealRuntime runs the printed init and
// destroy arguments with OpenTofu, outside a container: /captf/work is the
// written work directory (the module beside it, where ../../module of the
// generated root points), the environment is the printed -e list, and the
// provider mirror and the kubeconfig are the test's. An apply with the
// same arguments first creates what the destroy must remove.
func TestThePrintedLinesDestroyWithTheRealRuntime(t *testing.T) {
	envtest.Require(t, env)
	tofu := filepath.Join(env.Tools, "bin", "tofu")
	rec := records.Record{Job: "captf-m-by-hand-apply-a1-aaaaaa", Image: "registry.example/m:v1", InputsHash: "h2:by-hand"}
	owner := metav1.OwnerReference{APIVersion: infrav1.GroupVersion.String(), Kind: "TerraformMachine", Name: "by-hand", UID: "uid-by-hand"}
	rec.MainTF = []byte(`{"terraform":{"backend":{"kubernetes":{}}},"variable":{"bootstrap_data":{"sensitive":true}},` +
		`"module":{"role":{"source":"../../module","bootstrap_data":"${var.bootstrap_data}"}}}`)
	rec.Tfvars = []byte(`{"bootstrap_data":"` + sensitiveInput + `"}`)
	s, err := records.Secret("default", owner, rec, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Create(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	out, _, err := runCaptf(t, "inputs", "tfm/by-hand", "-n", "default", "--out", dir)
	if err != nil {
		t.Fatal(err)
	}

	kc, err := env.ControlPlane.AdminKubeconfig()
	if err != nil {
		t.Fatal(err)
	}
	cliConfig := `provider_installation {
  filesystem_mirror {
    path    = "` + filepath.Join(env.Tools, "providers") + `"
    include = ["*/*/*"]
  }
  direct {
    exclude = ["*/*/*"]
  }
}
`
	for name, data := range map[string]string{"module/main.tf": "variable \"bootstrap_data\" {}\nresource \"null_resource\" \"x\" {}\n",
		"kubeconfig": string(kc), "cli.tfrc": cliConfig} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// The environment is the printed -e list with the paths mapped.
	local := strings.NewReplacer("/captf/work", filepath.Join(dir, "work"), "/captf/kubeconfig", filepath.Join(dir, "kubeconfig"))
	environ := []string{"PATH=" + os.Getenv("PATH")}
	var initArgs, destroyArgs string
	for _, line := range strings.Split(out[:strings.Index(out, "# With podman")], "\n") {
		fields := strings.Fields(line)
		for i := 0; i+1 < len(fields); i++ {
			if fields[i] == "-e" && !strings.HasPrefix(fields[i+1], "TF_CLI_CONFIG_FILE=") {
				environ = append(environ, local.Replace(fields[i+1]))
			}
		}
		switch line = strings.TrimSpace(line); {
		case strings.HasPrefix(line, "init ") && initArgs == "":
			initArgs = local.Replace(line)
		case strings.HasPrefix(line, "destroy ") && destroyArgs == "":
			destroyArgs = line
		}
	}
	environ = append(environ, "TF_CLI_CONFIG_FILE="+filepath.Join(dir, "cli.tfrc"))
	run := func(args string) string {
		t.Helper()
		cmd := exec.Command("sh", "-c", tofu+" "+args)
		cmd.Dir, cmd.Env = filepath.Join(dir, "work", "root"), environ
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("tofu %s: %v\n%s", args, err, b)
		}
		return string(b)
	}
	run(initArgs)
	run(strings.Replace(destroyArgs, "destroy ", "apply ", 1))
	if got := run(destroyArgs); !strings.Contains(got, "Resources: 1 destroyed") {
		t.Errorf("the printed destroy destroyed nothing:\n%s", got)
	}
}
