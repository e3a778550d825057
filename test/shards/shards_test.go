// Package shards_test runs two CAPTF managers with different --watch-filter
// values, both electing a leader, against one real API server, and checks
// that neither ever writes to the other's objects.
package shards_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/setup"
	"captf.io/captf/internal/test/envtest"
)

var env *envtest.Env

func TestMain(m *testing.M) {
	os.Exit(envtest.Main(m, &env, envtest.Options{Webhooks: true, ClusterAPICRDs: true}))
}

const managerNamespace = "captf-system"

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port
}

// startShard runs a manager with --watch-filter=value and --leader-elect,
// whose writes are recorded in managedFields as "captf-shard-<value>".
// The first one serves the admission webhooks.
func startShard(t *testing.T, value string, webhooks bool) {
	t.Helper()
	_, port, certDir := env.ControlPlane.WebhookServer()
	if !webhooks {
		port = freePort(t)
	}
	o := setup.Defaults()
	o.HealthAddr, o.DiagnosticsAddress, o.WebhookPort, o.WebhookCertDir = "0", "0", port, certDir
	o.RunnerImage, o.WatchFilter, o.LeaderElect = "local/captf-manager:test", value, true
	cfg := rest.CopyConfig(env.Config)
	cfg.UserAgent = "captf-shard-" + value
	built, err := setup.BuildManager(cfg, o, func(mo *ctrl.Options) {
		mo.Controller.SkipNameValidation = ptr.To(true) // two managers in one process
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- built.Manager.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager %s: %v", value, err)
		}
	})
}

// writers names the field managers that wrote obj, ours excluded.
func writers(t *testing.T, obj client.Object) []string {
	t.Helper()
	if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range obj.GetManagedFields() {
		if !slices.Contains(out, f.Manager) && f.Manager != "captf-test" {
			out = append(out, f.Manager)
		}
	}
	slices.Sort(out)
	return out
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: timed out", what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// Two managers sharded by --watch-filter both elect a leader (one Lease
// each) and reconcile their own objects; the events that reach both (a
// Cluster changed, an identity created, a variables source changed) never
// make one write to the other's objects, nor to an object of no shard.
func TestShardsNeverTouchEachOther(t *testing.T) {
	envtest.Require(t, env)
	ctx := context.Background()
	for _, ns := range []string{managerNamespace, "shared"} {
		if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range []string{"POD_NAMESPACE", "SERVICE_ACCOUNT_NAME"} {
		t.Setenv(k, map[string]string{"POD_NAMESPACE": managerNamespace, "SERVICE_ACCOUNT_NAME": "captf-controller-manager"}[k])
	}
	test, err := client.New(rest.CopyConfig(env.Config), client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	test = client.WithFieldOwner(test, "captf-test")
	startShard(t, "a", true)
	startShard(t, "b", false)
	// Admission answers once the first manager serves its webhooks.
	create := func(o client.Object) {
		t.Helper()
		var err error
		eventually(t, fmt.Sprintf("creating %T %s", o, o.GetName()), func() bool {
			err = test.Create(ctx, o)
			return err == nil || !apierrors.IsInternalError(err)
		})
		if err != nil {
			t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}
	create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shared", Name: "settings", Labels: map[string]string{infrav1.VariablesLabel: "true"}},
		Data: map[string]string{"description": "one"}})
	objects := map[string]*infrav1.TerraformCluster{}
	for _, shard := range []string{"a", "b", ""} {
		name := "c-" + shard
		if shard == "" {
			name = "c-none"
		}
		labels := map[string]string{clusterv1.ClusterNameLabel: name}
		if shard != "" {
			labels[infrav1.WatchFilterLabel] = shard
		}
		c := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "shared", Name: name, Labels: labels},
			Spec: clusterv1.ClusterSpec{InfrastructureRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: infrav1.GroupVersion.Group, Kind: "TerraformCluster", Name: name}}}
		create(c)
		owner := metav1.OwnerReference{APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: name, UID: c.UID}
		tc := &infrav1.TerraformCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "shared", Name: name, Labels: labels, OwnerReferences: []metav1.OwnerReference{owner}},
			Spec: infrav1.TerraformClusterSpec{Source: infrav1.SourceSpec{Image: "local/noop-cluster:tofu"}, IdentityRef: &infrav1.IdentityReference{Name: "shared-id"},
				VariablesFrom: []infrav1.VariablesFromSource{{ConfigMapRef: &infrav1.LocalObjectReference{Name: "settings"}}}}}
		create(tc)
		objects[shard] = tc
	}
	// Each shard's leader reports on its object: IdentityAllowed says the
	// identity is missing.
	reported := func(tc *infrav1.TerraformCluster, reason string) func() bool {
		return func() bool {
			o := &infrav1.TerraformCluster{}
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(tc), o); err != nil {
				return false
			}
			for _, c := range o.Status.Conditions {
				if c.Type == infrav1.IdentityAllowedCondition && c.Reason == reason {
					return true
				}
			}
			return false
		}
	}
	for _, shard := range []string{"a", "b"} {
		eventually(t, fmt.Sprintf("shard %s reporting on its cluster", shard), reported(objects[shard], infrav1.IdentityNotFoundReason))
	}

	// Events every manager receives: the shared source changes, the
	// Clusters change, the identity appears. Each shard reports the
	// identity on its own object.
	cm := &corev1.ConfigMap{}
	if err := test.Get(ctx, client.ObjectKey{Namespace: "shared", Name: "settings"}, cm); err != nil {
		t.Fatal(err)
	}
	cm.Data["description"] = "two"
	if err := test.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	for _, tc := range objects {
		c := &clusterv1.Cluster{}
		if err := test.Get(ctx, client.ObjectKeyFromObject(tc), c); err != nil {
			t.Fatal(err)
		}
		c.Annotations = map[string]string{"touched": "yes"}
		if err := test.Update(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	create(&infrav1.TerraformClusterIdentity{ObjectMeta: metav1.ObjectMeta{Name: "shared-id"},
		Spec: infrav1.TerraformClusterIdentitySpec{SecretRef: infrav1.SecretReference{Namespace: managerNamespace, Name: "missing"},
			AllowedNamespaces: &infrav1.AllowedNamespaces{List: []string{"elsewhere"}}}})
	for _, shard := range []string{"a", "b"} {
		eventually(t, fmt.Sprintf("shard %s reporting the identity on its cluster", shard), reported(objects[shard], infrav1.NamespaceNotAllowedReason))
	}

	for shard, tc := range objects {
		want := []string{"captf-shard-" + shard}
		if shard == "" {
			want = nil
		}
		if got := writers(t, tc); !slices.Equal(got, want) {
			t.Errorf("TerraformCluster %s was written by %v, want %v", tc.Name, got, want)
		}
	}
}
