// Package config_test renders config/default and the optional components as
// `kustomize build` does and applies them to the real API server: the
// install is valid Kubernetes, its webhooks point at the paths the manager
// serves, the components select what the install runs, and everything
// carries the documented names.
package config_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"captf.io/captf/internal/test/envtest"
	"captf.io/captf/internal/test/kustomizetest"
	"captf.io/captf/internal/webhooks"
)

var env *envtest.Env

func TestMain(m *testing.M) {
	os.Exit(envtest.Main(m, &env, envtest.Options{}))
}

func TestDefaultInstallRendersAndApplies(t *testing.T) {
	envtest.Require(t, env)
	objs := kustomizetest.Build(t, []string{"config/default"}, nil)
	byKind := map[string][]*unstructured.Unstructured{}
	for _, o := range objs {
		byKind[o.GetKind()] = append(byKind[o.GetKind()], o)
	}
	if n := len(byKind["CustomResourceDefinition"]); n != 8 {
		t.Errorf("%d CRDs, want 8", n)
	}
	for _, crd := range byKind["CustomResourceDefinition"] {
		if crd.GetLabels()["cluster.x-k8s.io/provider"] != "infrastructure-terraform" {
			t.Errorf("CRD %s lacks the provider label", crd.GetName())
		}
	}
	dep := byKind["Deployment"]
	if len(dep) != 1 || dep[0].GetName() != "captf-controller-manager" {
		t.Fatalf("want the Deployment captf-controller-manager, got %v", dep)
	}
	if replicas, _, _ := unstructured.NestedInt64(dep[0].Object, "spec", "replicas"); replicas != 2 {
		t.Errorf("%d replicas, want 2", replicas)
	}
	containers, _, _ := unstructured.NestedSlice(dep[0].Object, "spec", "template", "spec", "containers")
	args, _, _ := unstructured.NestedStringSlice(containers[0].(map[string]any), "args")
	if !slices.Contains(args, "--leader-elect") {
		t.Errorf("manager args %v lack --leader-elect", args)
	}

	whc := byKind["ValidatingWebhookConfiguration"]
	if len(whc) != 1 || whc[0].GetAnnotations()["cert-manager.io/inject-ca-from"] != "captf-system/captf-serving-cert" {
		t.Fatalf("want one webhook configuration with the cert-manager CA annotation, got %v", whc)
	}
	served := []string{webhooks.IdentityPath, webhooks.IdentityDeletePath, webhooks.ClusterPath, webhooks.MachinePath, webhooks.MachinePoolPath,
		webhooks.ClusterTemplatePath, webhooks.MachineTemplatePath, webhooks.MachinePoolTemplatePath, webhooks.MachineDeletePath, webhooks.PlanPath}
	hooks, _, _ := unstructured.NestedSlice(whc[0].Object, "webhooks")
	for _, h := range hooks {
		path, _, _ := unstructured.NestedString(h.(map[string]any), "clientConfig", "service", "path")
		name, _, _ := unstructured.NestedString(h.(map[string]any), "name")
		policy, _, _ := unstructured.NestedString(h.(map[string]any), "failurePolicy")
		if !slices.Contains(served, path) {
			t.Errorf("webhook %s calls %s, which the manager does not serve", name, path)
		}
		if strings.HasPrefix(name, "delete.") != (policy == "Ignore") {
			t.Errorf("webhook %s has failurePolicy %s: DELETE entries fail open, the others closed", name, policy)
		}
	}
	for _, name := range []string{"captf-manager-role", "captf-runner", "captf-viewer-role", "captf-editor-role", "captf-plan-approver-role"} {
		found := false
		for _, r := range byKind["ClusterRole"] {
			found = found || r.GetName() == name
		}
		if !found {
			t.Errorf("no ClusterRole %s", name)
		}
	}

	// Everything but cert-manager's objects (no cert-manager here) applies
	// to a real API server.
	apply(context.Background(), t, objs)
}

// apply applies objs server-side, but for the kinds of operators this API
// server does not have (cert-manager, the Prometheus Operator).
func apply(ctx context.Context, t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	objs = slices.Clone(objs)
	slices.SortStableFunc(objs, func(a, b *unstructured.Unstructured) int {
		return boolInt(b.GetKind() == "Namespace") - boolInt(a.GetKind() == "Namespace")
	})
	for _, o := range objs {
		if strings.HasPrefix(o.GetAPIVersion(), "cert-manager.io/") || strings.HasPrefix(o.GetAPIVersion(), "monitoring.coreos.com/") {
			continue
		}
		if err := env.Client.Patch(ctx, o, client.Apply, client.ForceOwnership, client.FieldOwner("config-test")); err != nil { //nolint:staticcheck // server-side apply of unstructured objects
			t.Errorf("applying %s %s: %v", o.GetKind(), o.GetName(), err)
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
