package controlplane_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"captf.io/captf/internal/controlplane"
)

// The controller manager's garbage collector runs: a dependent whose owner
// is deleted goes away, as it will for CAPTF's Jobs and Secrets. With
// CAPTF_AUDIT_DIR set, the API server's audit log names each request
// and carries no object.
func TestControllerManagerCollectsGarbage(t *testing.T) {
	tools := os.Getenv("CAPTF_TOOLS")
	if err := controlplane.CheckTools(tools, "etcd", "kube-apiserver", "kube-controller-manager"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("FAIL: %v", err)
		}
		t.Skipf("SKIP (not in CI): %v", err)
	}
	audit := t.TempDir()
	t.Setenv(controlplane.AuditDirEnv, audit)
	cp, err := controlplane.Start(controlplane.Options{Tools: tools, ControllerManager: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := cp.Stop(); err != nil {
			t.Error(err)
		}
	}()
	cs := kubernetes.NewForConfigOrDie(cp.Config)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	owner, err := cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dependent := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Name: "dependent",
		OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID,
		}},
	}}
	if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, dependent, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cs.CoreV1().ConfigMaps("default").Delete(ctx, owner.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextCancel(ctx, 250*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().ConfigMaps("default").Get(ctx, "dependent", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Fatalf("the garbage collector did not delete the dependent of a deleted owner: %v", err)
	}
	logs, err := filepath.Glob(filepath.Join(audit, "audit-*.log"))
	if err != nil || len(logs) != 1 {
		t.Fatalf("want one audit log in %s, found %v (%v)", controlplane.AuditDirEnv, logs, err)
	}
	data, err := os.ReadFile(logs[0])
	if err != nil {
		t.Fatal(err)
	}
	created := false
	for line := range strings.Lines(string(data)) {
		var e struct {
			Verb          string `json:"verb"`
			Stage         string `json:"stage"`
			ObjectRef     struct{ Resource, Name string }
			RequestObject map[string]any `json:"requestObject"`
		}
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("an audit log line is not JSON: %v", err)
		}
		if e.RequestObject != nil {
			t.Fatalf("the audit log carries a request's object: %.200s", line)
		}
		created = created || e.Verb == "create" && e.Stage == "ResponseComplete" && e.ObjectRef.Resource == "configmaps" && e.ObjectRef.Name == "dependent"
	}
	if !created {
		t.Errorf("the audit log does not record the dependent ConfigMap's creation (%d bytes)", len(data))
	}
}
