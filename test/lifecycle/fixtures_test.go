package lifecycle_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/test/kubelet"
)

// Values that must never appear in a status, condition, event or log.
const (
	credentialValue = "tok-9f3a77c2e1d84b06-credential"
	bootstrapValue  = "#cloud-config\nbootstrap-secret-5d1e0c9a"
)

// world is one test's namespace with an identity, a Cluster and its
// TerraformCluster.
type world struct {
	t        *testing.T
	ns       string
	identity string
	cluster  string
	image    func(module string) string
}

func randomSuffix(t *testing.T) string {
	b := make([]byte, 3)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// newWorld makes a namespace, a credentials Secret and an identity
// allowing the namespace.
func newWorld(t *testing.T, runtime string) *world {
	t.Helper()
	startManager(t)
	w := &world{t: t, ns: "lc-" + randomSuffix(t), cluster: "demo"}
	w.identity = "id-" + w.ns
	w.image = func(module string) string { return kubelet.ExampleImage(module, runtime) }
	w.create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: w.ns}})
	w.create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: "cloud"}, Data: map[string][]byte{"NOOP_TOKEN": []byte(credentialValue)}})
	w.create(&infrav1.TerraformClusterIdentity{
		ObjectMeta: metav1.ObjectMeta{Name: w.identity},
		Spec: infrav1.TerraformClusterIdentitySpec{
			SecretRef:         infrav1.SecretReference{Namespace: w.ns, Name: "cloud"},
			AllowedNamespaces: &infrav1.AllowedNamespaces{List: []string{w.ns}},
		},
	})
	t.Cleanup(func() {
		_ = env.Client.Delete(t.Context(), &infrav1.TerraformClusterIdentity{ObjectMeta: metav1.ObjectMeta{Name: w.identity}})
	})
	return w
}

func (w *world) create(obj client.Object) {
	w.t.Helper()
	if err := env.Client.Create(w.t.Context(), obj); err != nil {
		w.t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
	}
}

func (w *world) ref(kind, name string) clusterv1.ContractVersionedObjectReference {
	return clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: kind, Name: name}
}

func owner(kind, name string, uid string) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: clusterv1.GroupVersion.String(), Kind: kind, Name: name, UID: types.UID(uid)}
}

// newCluster creates the Cluster and its TerraformCluster, owned as
// Cluster API's Cluster controller owns it.
func (w *world) newCluster(change func(*infrav1.TerraformCluster)) *infrav1.TerraformCluster {
	w.t.Helper()
	c := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: w.cluster},
		Spec:       clusterv1.ClusterSpec{InfrastructureRef: w.ref("TerraformCluster", w.cluster)},
	}
	w.create(c)
	tc := &infrav1.TerraformCluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: w.cluster,
			Labels:          map[string]string{clusterv1.ClusterNameLabel: w.cluster},
			OwnerReferences: []metav1.OwnerReference{owner("Cluster", c.Name, string(c.UID))}},
		Spec: infrav1.TerraformClusterSpec{
			Source:      infrav1.SourceSpec{Image: w.image("noop-cluster")},
			IdentityRef: &infrav1.IdentityReference{Name: w.identity},
			Drift:       &infrav1.ClusterDriftSpec{IntervalSeconds: ptr.To[int32](0)},
		},
	}
	if change != nil {
		change(tc)
	}
	w.create(tc)
	return tc
}

// passOver makes a spec change that leaves the inputs alone (the drift
// interval) and waits for a pass over it (status.observedGeneration): what
// that pass did not start, it decided not to. It replaces sleeping in a
// test that asserts nothing happened.
func (w *world) passOver(tc *infrav1.TerraformCluster) {
	w.t.Helper()
	w.update(tc, func(o client.Object) {
		c := o.(*infrav1.TerraformCluster)
		next := int32(3600)
		if d := c.Spec.Drift; d != nil && d.IntervalSeconds != nil && *d.IntervalSeconds >= next {
			next = *d.IntervalSeconds + 60
		}
		c.Spec.Drift = &infrav1.ClusterDriftSpec{IntervalSeconds: &next, Action: infrav1.DriftActionReport}
	})
	w.eventually(time.Minute, "a pass over the new generation", func() (bool, error) {
		w.get(tc)
		return tc.Status.ObservedGeneration == tc.Generation, nil
	})
}

// bootstrapSecret creates a bootstrap data Secret as a bootstrap provider
// would.
func (w *world) bootstrapSecret(name string) {
	w.t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: name},
		Data: map[string][]byte{"value": []byte(bootstrapValue), "format": []byte("cloud-config")}}
	if err := env.Client.Create(w.t.Context(), s); err != nil && !apierrors.IsAlreadyExists(err) {
		w.t.Fatalf("creating bootstrap Secret %s: %v", name, err)
	}
}

// newMachine creates a Machine with its bootstrap data and its
// TerraformMachine, running the noop-machine module or the one named.
func (w *world) newMachine(name string, module ...string) *infrav1.TerraformMachine {
	w.t.Helper()
	w.bootstrapSecret(name + "-bootstrap")
	m := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: name, Labels: map[string]string{clusterv1.ClusterNameLabel: w.cluster}},
		Spec: clusterv1.MachineSpec{ClusterName: w.cluster, Version: "v1.34.0",
			Bootstrap:         clusterv1.Bootstrap{DataSecretName: ptr.To(name + "-bootstrap")},
			InfrastructureRef: w.ref("TerraformMachine", name)},
	}
	w.create(m)
	tm := &infrav1.TerraformMachine{
		ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: name,
			Labels:          map[string]string{clusterv1.ClusterNameLabel: w.cluster},
			OwnerReferences: []metav1.OwnerReference{owner("Machine", m.Name, string(m.UID))}},
		Spec: infrav1.TerraformMachineSpec{Source: infrav1.SourceSpec{Image: w.image(append(module, "noop-machine")[0])}},
	}
	w.create(tm)
	return tm
}

// newPool creates a MachinePool of replicas with its bootstrap data and
// its TerraformMachinePool.
func (w *world) newPool(name string, replicas int32, module ...string) *infrav1.TerraformMachinePool {
	w.t.Helper()
	w.bootstrapSecret(name + "-bootstrap")
	mp := &clusterv1.MachinePool{
		ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: name, Labels: map[string]string{clusterv1.ClusterNameLabel: w.cluster}},
		Spec: clusterv1.MachinePoolSpec{ClusterName: w.cluster, Replicas: ptr.To(replicas),
			Template: clusterv1.MachineTemplateSpec{Spec: clusterv1.MachineSpec{ClusterName: w.cluster,
				Bootstrap:         clusterv1.Bootstrap{DataSecretName: ptr.To(name + "-bootstrap")},
				InfrastructureRef: w.ref("TerraformMachinePool", name)}}},
	}
	w.create(mp)
	tmp := &infrav1.TerraformMachinePool{
		ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: name,
			Labels:          map[string]string{clusterv1.ClusterNameLabel: w.cluster},
			OwnerReferences: []metav1.OwnerReference{owner("MachinePool", mp.Name, string(mp.UID))}},
		Spec: infrav1.TerraformMachinePoolSpec{Source: infrav1.SourceSpec{Image: w.image(append(module, "noop-machinepool")[0])}},
	}
	w.create(tmp)
	return tmp
}

// eventually polls cond every 250ms for up to timeout.
func (w *world) eventually(timeout time.Duration, what string, cond func() (bool, error)) {
	w.t.Helper()
	err := wait.PollUntilContextTimeout(w.t.Context(), 250*time.Millisecond, timeout, true, func(context.Context) (bool, error) { return cond() })
	if err != nil {
		w.t.Fatalf("waiting for %s: %v", what, err)
	}
}

// get re-reads obj.
func (w *world) get(obj client.Object) {
	w.t.Helper()
	if err := env.Client.Get(w.t.Context(), client.ObjectKeyFromObject(obj), obj); err != nil {
		w.t.Fatalf("reading %s: %v", obj.GetName(), err)
	}
}

// conditions of a workload object.
func conditions(obj client.Object) []metav1.Condition {
	switch o := obj.(type) {
	case *infrav1.TerraformCluster:
		return o.Status.Conditions
	case *infrav1.TerraformMachine:
		return o.Status.Conditions
	case *infrav1.TerraformMachinePool:
		return o.Status.Conditions
	case *infrav1.TerraformPlan:
		return o.Status.Conditions
	}
	return nil
}

func provisioned(obj client.Object) bool {
	var p *bool
	switch o := obj.(type) {
	case *infrav1.TerraformCluster:
		p = o.Status.Initialization.Provisioned
	case *infrav1.TerraformMachine:
		p = o.Status.Initialization.Provisioned
	case *infrav1.TerraformMachinePool:
		p = o.Status.Initialization.Provisioned
	}
	return p != nil && *p
}

// waitProvisioned waits for provisioned, failing early with the object's
// conditions when an apply failed.
func (w *world) waitProvisioned(obj client.Object) {
	w.t.Helper()
	w.eventually(3*time.Minute, obj.GetName()+" provisioned", func() (bool, error) {
		w.get(obj)
		return provisioned(obj), nil
	})
}

func conditionOf(obj client.Object, t string) *metav1.Condition {
	return meta.FindStatusCondition(conditions(obj), t)
}

// jobsOf lists the object's Jobs of op ("" for all).
func (w *world) jobsOf(kind, name, op string) []batchv1.Job {
	w.t.Helper()
	var list batchv1.JobList
	sel := client.MatchingLabels{infrav1.OwnerKindLabel: kind, infrav1.OwnerNameLabel: name}
	if op != "" {
		sel[infrav1.OperationLabel] = op
	}
	if err := env.Client.List(w.t.Context(), &list, client.InNamespace(w.ns), sel); err != nil {
		w.t.Fatal(err)
	}
	return list.Items
}

// moduleFrom copies the example module name into a directory of the test,
// letting change edit its files (file name to content) first: a module
// that misbehaves the way a test needs.
func moduleFrom(t *testing.T, name string, change func(files map[string]string)) string {
	t.Helper()
	src := filepath.Join("..", "..", "examples", "modules", name)
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = string(b)
	}
	change(files)
	root, err := os.MkdirTemp(t.TempDir(), name)
	if err != nil {
		t.Fatal(err)
	}
	for file, body := range files {
		if err := os.WriteFile(filepath.Join(root, file), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// waitEvent waits until an event of reason regards the object name: the
// recorder writes events asynchronously, each on its own, so one emitted
// in the pass a test waited for may land a moment later; and some follow
// a Job the test did not wait for, which a loaded machine runs slowly.
func (w *world) waitEvent(name, reason string) {
	w.t.Helper()
	w.eventually(2*time.Minute, "event "+reason+" on "+name, func() (bool, error) {
		return slices.Contains(w.events(name), reason), nil
	})
}

// events lists the reasons of the events regarding an object.
func (w *world) events(name string) []string {
	w.t.Helper()
	var list corev1.EventList
	if err := env.Client.List(w.t.Context(), &list, client.InNamespace(w.ns)); err != nil {
		w.t.Fatal(err)
	}
	var out []string
	for _, e := range list.Items {
		if e.InvolvedObject.Name == name {
			out = append(out, e.Reason)
		}
	}
	return out
}

// leaks returns the secret values text holds.
func leaks(text string) []string {
	var out []string
	for _, v := range []string{credentialValue, "bootstrap-secret-5d1e0c9a", base64.StdEncoding.EncodeToString([]byte(bootstrapValue))} {
		if strings.Contains(text, v) {
			out = append(out, v)
		}
	}
	return out
}

// noSecretsIn fails when a value that must stay secret appears in text.
func noSecretsIn(t *testing.T, where, text string) {
	t.Helper()
	for _, v := range leaks(text) {
		t.Errorf("%s leaks a secret value %q", where, v)
	}
}

// updateCluster changes the world's Cluster API Cluster.
func (w *world) updateCluster(change func(*clusterv1.Cluster)) {
	w.t.Helper()
	w.update(&clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: w.cluster}}, func(o client.Object) {
		change(o.(*clusterv1.Cluster))
	})
}

// setPodCIDR sets the Cluster's pod network; the example cluster module
// replaces its network and load balancer when it changes.
func (w *world) setPodCIDR(cidrs ...string) {
	w.t.Helper()
	w.updateCluster(func(c *clusterv1.Cluster) { c.Spec.ClusterNetwork.Pods.CIDRBlocks = cidrs })
}

// pauseCluster sets or clears the Cluster's spec.paused and waits until
// tc reports it.
func (w *world) pauseCluster(tc *infrav1.TerraformCluster, paused bool) {
	w.t.Helper()
	w.updateCluster(func(c *clusterv1.Cluster) {
		c.Spec.Paused = nil
		if paused {
			c.Spec.Paused = &paused
		}
	})
	want := metav1.ConditionFalse
	if paused {
		want = metav1.ConditionTrue
	}
	w.eventually(time.Minute, "Paused reported", func() (bool, error) {
		w.get(tc)
		c := conditionOf(tc, infrav1.PausedCondition)
		return c != nil && c.Status == want, nil
	})
}
