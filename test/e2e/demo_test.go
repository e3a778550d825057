// Package e2e runs CAPTF's local environment end to end, the way a user
// runs it from the README.
package e2e

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"captf.io/captf/internal/controlplane"
	"captf.io/captf/internal/devenv"
	"captf.io/captf/internal/test/envtest"
)

func toolsOrSkip(t *testing.T) string {
	t.Helper()
	tools := os.Getenv(envtest.ToolsEnv)
	err := controlplane.CheckTools(tools, "etcd", "kube-apiserver", "kube-controller-manager", "kubectl")
	if err == nil {
		return tools
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("FAIL: %v", err)
	}
	t.Skipf("SKIP (not in CI): %v", err)
	return ""
}

// The README's demo: every kind is created and listed with its columns, an
// invalid object is rejected naming its fields, and nothing is left after.
func TestDemoShowsEveryKindAndCleansUp(t *testing.T) {
	tools := toolsOrSkip(t)
	root, err := envtest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	env, err := devenv.Up(ctx, devenv.Options{
		Tools: tools, Repo: root, Kubeconfig: filepath.Join(t.TempDir(), "kubeconfig"), Log: &bytes.Buffer{},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := env.Down(); err != nil {
			t.Error(err)
		}
	}()
	var out bytes.Buffer
	if err := env.Demo(ctx, &out); err != nil {
		t.Fatalf("demo failed: %v\n%s", err, out.String())
	}
	for _, want := range []string{
		"terraformclusteridentity.infrastructure.cluster.x-k8s.io/noop   noop-credentials   captf-system   True",
		"terraformcluster.infrastructure.cluster.x-k8s.io/demo",
		"terraformmachine.infrastructure.cluster.x-k8s.io/demo-cp-0",
		"terraformmachinepool.infrastructure.cluster.x-k8s.io/demo-workers",
		"terraformclustertemplate.infrastructure.cluster.x-k8s.io/noop",
		"terraformmachinetemplate.infrastructure.cluster.x-k8s.io/noop-worker",
		"terraformmachinepooltemplate.infrastructure.cluster.x-k8s.io/noop-pool",
		"terraformplan.infrastructure.cluster.x-k8s.io/demo-3f9a1c7be2",
		"READY   PROVISIONED",
		"TerraformCluster default/demo is owned by Cluster demo",
		"cluster.cluster.x-k8s.io/demo",
		"spec.drift.intervalSeconds",
		"lockTimeoutSeconds must be lower than activeDeadlineSeconds",
		"spec.jobs.env[1].name",
		"Nothing is left.",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the demo's output lacks %q:\n%s", want, out.String())
		}
	}
}
