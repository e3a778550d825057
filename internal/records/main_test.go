package records_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/test/envtest"
)

// env runs etcd and kube-apiserver with CAPTF's CRDs.
var env *envtest.Env

// sensitive is in every tfvars the tests write; it must never reach a log
// line or an error.
const sensitive = "bootstrap-secret-5be1-do-not-leak"

var (
	mu     sync.Mutex
	output []string
)

func keep(s string) {
	mu.Lock()
	defer mu.Unlock()
	output = append(output, s)
}

func TestMain(m *testing.M) {
	code := envtest.Main(m, &env, envtest.Options{})
	if code == 0 && env != nil {
		all := strings.Join(output, "\n")
		if strings.Contains(all, sensitive) {
			fmt.Fprintf(os.Stderr, "FAIL: a tfvars value leaked into logs or errors:\n%s\n", all)
			code = 1
		}
		if !strings.Contains(all, "Writing attempt record") {
			fmt.Fprintln(os.Stderr, "FAIL: no log line was captured; the leak scan would prove nothing")
			code = 1
		}
	}
	os.Exit(code)
}

// testContext logs into the scanned output.
func testContext(t *testing.T) context.Context {
	t.Helper()
	log := funcr.New(func(prefix, args string) { keep(prefix + " " + args) }, funcr.Options{Verbosity: 10})
	return ctrl.LoggerInto(t.Context(), log)
}

// check fails the test on err, keeping the error for the leak scan.
func check(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		keep(err.Error())
		t.Fatal(err)
	}
}

func namespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "records-"}}
	check(t, env.Client.Create(t.Context(), ns))
	return ns.Name
}

// machine creates a TerraformMachine, the owner of the records.
func machine(t *testing.T, ns, name string) *infrav1.TerraformMachine {
	t.Helper()
	m := &infrav1.TerraformMachine{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       infrav1.TerraformMachineSpec{Source: infrav1.SourceSpec{Image: "registry.example/modules/noop:v1"}},
	}
	check(t, env.Client.Create(t.Context(), m))
	return m
}

func secret(t *testing.T, ns, name string) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{}
	check(t, env.Client.Get(t.Context(), ctrlKey(ns, name), s))
	return s
}
