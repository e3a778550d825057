package credentials_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/test/envtest"
)

// env runs etcd, kube-apiserver and kube-controller-manager with the
// garbage collector: mirrors are owned by several objects, and the tests
// prove the collector keeps a mirror while any owner exists.
var env *envtest.Env

// credValue is the credential every source Secret carries; it must never
// show up in a log line, a condition, a result or an error.
const credValue = "cred-value-7f3a9c-do-not-leak"

// logs records every log line the code under test writes.
var logs = &logRecorder{}

type logRecorder struct {
	mu    sync.Mutex
	lines []string
}

func (r *logRecorder) logger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.lines = append(r.lines, prefix+" "+args)
	}, funcr.Options{Verbosity: 10})
}

func (r *logRecorder) all() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.lines, "\n")
}

// seen records every condition, result and error the tests produced, for
// the final scan.
var seen = &logRecorder{}

func record(v ...any) {
	seen.mu.Lock()
	defer seen.mu.Unlock()
	seen.lines = append(seen.lines, fmt.Sprintf("%+v", v))
}

func TestMain(m *testing.M) {
	code := envtest.Main(m, &env, envtest.Options{ControllerManager: true})
	// After every flow: nothing the code logged or returned carries the
	// credential value.
	if code == 0 && env != nil {
		for what, text := range map[string]string{"log output": logs.all(), "conditions, results and errors": seen.all()} {
			if strings.Contains(text, credValue) {
				fmt.Fprintf(os.Stderr, "FAIL: the credential value leaked into the %s:\n%s\n", what, text)
				code = 1
			}
		}
		// Flows that produced results must have logged too (a benchmark-only
		// run produces neither).
		if logs.all() == "" && seen.all() != "" {
			fmt.Fprintln(os.Stderr, "FAIL: no log line was captured; the leak scan would prove nothing")
			code = 1
		}
	}
	os.Exit(code)
}

func testContext(t *testing.T) context.Context {
	t.Helper()
	return ctrl.LoggerInto(t.Context(), logs.logger())
}

// namespace creates a namespace with a generated name and labels.
func namespace(t *testing.T, prefix string, labels map[string]string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-", Labels: labels}}
	if err := env.Client.Create(t.Context(), ns); err != nil {
		t.Fatalf("creating namespace: %v", err)
	}
	return ns.Name
}

// sourceSecret creates the operator's credentials Secret.
func sourceSecret(t *testing.T, ns, name string, data map[string][]byte) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: data}
	if err := env.Client.Create(t.Context(), s); err != nil {
		t.Fatalf("creating source Secret: %v", err)
	}
	return s
}

func identity(name, secretNS, secretName string, an *infrav1.AllowedNamespaces) *infrav1.TerraformClusterIdentity {
	return &infrav1.TerraformClusterIdentity{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: infrav1.TerraformClusterIdentitySpec{
			SecretRef:         infrav1.SecretReference{Namespace: secretNS, Name: secretName},
			AllowedNamespaces: an,
		},
	}
}

// cluster creates a TerraformCluster using identity in ns.
func cluster(t *testing.T, ns, name, identity string) *infrav1.TerraformCluster {
	t.Helper()
	c := &infrav1.TerraformCluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: infrav1.TerraformClusterSpec{
			Source:      infrav1.SourceSpec{Image: "registry.example/modules/noop:v1"},
			IdentityRef: &infrav1.IdentityReference{Name: identity},
		},
	}
	if err := env.Client.Create(t.Context(), c); err != nil {
		t.Fatalf("creating TerraformCluster %s/%s: %v", ns, name, err)
	}
	return c
}

func credentialData() map[string][]byte {
	return map[string][]byte{"AWS_ACCESS_KEY_ID": []byte("AKIA-" + credValue), "AWS_SECRET_ACCESS_KEY": []byte(credValue)}
}

// lend makes a system and a tenant namespace, the source Secret secret in
// the system one, and the identity name lending it to the tenant one.
func lend(t *testing.T, name, secret string) (tenant string, src *corev1.Secret, id *infrav1.TerraformClusterIdentity) {
	t.Helper()
	system := namespace(t, "system", nil)
	tenant = namespace(t, "tenant", nil)
	src = sourceSecret(t, system, secret, credentialData())
	return tenant, src, identity(name, system, src.Name, &infrav1.AllowedNamespaces{List: []string{tenant}})
}
