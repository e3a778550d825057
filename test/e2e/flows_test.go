package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/devenv"
	"captf.io/captf/internal/evacuation"
	"captf.io/captf/internal/localnode"
	"captf.io/captf/pkg/state"
)

// jobWait bounds a step that waits for Jobs to run (an apply, a destroy):
// about a minute on an idle machine, up to four when the suite's other
// packages share the two cores, and a little more on a bad minute.
const jobWait = 6 * time.Minute

// controllerWait bounds a step that waits for a controller's reaction with
// no Job in between (an identity's status, a garbage collection): seconds
// on an idle machine, over a minute in a loaded run.
const controllerWait = 5 * time.Minute

// flowFunc is one flow: it runs in the namespace of f.
type flowFunc func(t *testing.T, ctx context.Context, f *flow)

// namedFlow is a flow and its namespace's name.
type namedFlow struct {
	name string
	run  flowFunc
}

// flowTimeout bounds one flow from the moment it starts (its steps have
// bounds of their own).
const flowTimeout = 20 * time.Minute

// The flows below share the package's environment (see sharedEnv) and
// run side by side (flowSlots at a time, the longest first), each in a
// namespace of its own with its own identity, so that none sees another's
// objects. The Cluster API topology flows start once the others are down
// to their last tailFlows: with three more Cluster API managers at work
// beside a full set of flows the two cores are saturated and steps of
// every flow slow down past their bounds, while the last few flows of the
// first group mostly wait for their Jobs and requeues (the cores were idle
// for up to a minute there when the topology flows waited for them all).
func TestFlows(t *testing.T) {
	t.Parallel()
	env := sharedEnv(t)
	var wg sync.WaitGroup
	defer wg.Wait()
	slots := make(chan struct{}, flowSlots)
	first := startFlows(t, env, &wg, slots, []namedFlow{
		{"oversize-state", oversizeState},
		{"guarded-replace", guardedReplace},
		{"interrupted-apply", interruptedApply},
		{"evac-chunked-state", evacChunkedState},
		{"delete-pool-foreground", deleteOwnerWith("MachinePool", "quickstart-pool", metav1.DeletePropagationForeground, "tofu", onePool)},
		{"delete-cluster-foreground", deleteClusterWith(metav1.DeletePropagationForeground, "tofu", machineAndPool)},
		{"machinedeployment", machineDeployment},
		{"delete-machinedeployment", deleteMachineDeployment("terraform")},
		{"credentials-rotation", credentialsRotation},
		{"missing-output", missingOutput},
		{"evac-copy-lost", evacCopyLost},
		{"evac-local-identity", evacLocalIdentity},
		{"delete-namespace", deleteNamespace("tofu")},
		{"delete-cluster-orphan", deleteClusterWith(metav1.DeletePropagationOrphan, "terraform", oneMachine)},
		{"delete-machine-foreground", deleteOwnerWith("Machine", "quickstart-worker-0", metav1.DeletePropagationForeground, "terraform", oneMachine)},
		{"delete-infra-first", deleteInfraFirst("terraform")},
		{"quickstart-tofu", quickstartOn("tofu")},
		{"quickstart-terraform", quickstartOn("terraform")},
		{"unpullable-image", unpullableImage},
	})
	first.waitUntilLeft(tailFlows)
	startFlows(t, env, &wg, slots, []namedFlow{
		{"clusterclass-kubeadm", clusterclassKubeadm},
		{"clusterclass", clusterClass},
		{"default-flavor", defaultFlavor},
	})
}

// flowSlots is how many flows run at once. On the two cores of the CI
// machine the suite is bound by CPU: flows beyond these would not finish
// sooner together, they would only slow every API request and Job of the
// others (past their bounds, in a loaded run).
const flowSlots = 8

// tailFlows is how many flows of the first group may still run when the
// topology flows start.
const tailFlows = 2

// flowGroup is a group of flows startFlows started.
type flowGroup struct {
	// finished receives once per finished flow.
	finished chan struct{}
	n        int
}

// waitUntilLeft returns once at most left flows of g are unfinished.
func (g flowGroup) waitUntilLeft(left int) {
	for done := 0; g.n-done > left; done++ {
		<-g.finished
	}
}

// startFlows starts the flows in order, each once one of slots is free
// (they mostly wait for Jobs), each within flowTimeout of its start; it
// returns once the last one started, and wg waits for them all.
func startFlows(t *testing.T, env *devenv.Env, wg *sync.WaitGroup, slots chan struct{}, flows []namedFlow) flowGroup {
	g := flowGroup{finished: make(chan struct{}, len(flows)), n: len(flows)}
	for _, fl := range flows {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { g.finished <- struct{}{} }()
			defer func() { <-slots }()
			t.Run(fl.name, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), flowTimeout)
				defer cancel()
				f := &flow{t: t, env: env, ns: fl.name}
				t.Cleanup(func() {
					if t.Failed() {
						f.dump(context.WithoutCancel(ctx))
					}
				})
				fl.run(t, ctx, f)
			})
		})
	}
	return g
}

// flow is one flow's namespace in the shared environment.
type flow struct {
	t   *testing.T
	env *devenv.Env
	ns  string
}

// identity is the name of the flow's TerraformClusterIdentity; its
// source Secret is <identity>-credentials in captf-system.
func (f *flow) identity() string { return f.ns }

func (f *flow) sourceSecret() string { return f.ns + "-credentials" }

// quickstart returns examples/quickstart moved into the flow's namespace
// (created first), with an identity and a credentials Secret of its own,
// and every module image on runtime rt ("" keeps the example's own).
func (f *flow) quickstart(rt string) []*unstructured.Unstructured {
	f.t.Helper()
	objs, err := devenv.ReadManifestDir(filepath.Join(f.env.Repo, "examples", "quickstart"))
	if err != nil {
		f.t.Fatal(err)
	}
	ns := &unstructured.Unstructured{}
	ns.SetAPIVersion("v1")
	ns.SetKind("Namespace")
	ns.SetName(f.ns)
	out := []*unstructured.Unstructured{ns}
	for _, o := range objs {
		switch {
		case o.GetKind() == "Namespace": // captf-system, kept
		case o.GetKind() == "Secret" && o.GetNamespace() == "captf-system":
			o.SetName(f.sourceSecret())
		case o.GetKind() == "TerraformClusterIdentity":
			o.SetName(f.identity())
			f.set(o, f.sourceSecret(), "spec", "secretRef", "name")
			f.set(o, []any{f.ns}, "spec", "allowedNamespaces", "list")
		default:
			o.SetNamespace(f.ns)
		}
		if o.GetKind() == "TerraformCluster" {
			f.set(o, f.identity(), "spec", "identityRef", "name")
		}
		if image, ok, _ := unstructured.NestedString(o.Object, "spec", "source", "image"); ok && rt != "" {
			module := strings.TrimPrefix(image[:strings.LastIndex(image, ":")], "local/")
			f.set(o, devenv.ExampleImage(module, rt), "spec", "source", "image")
		}
		out = append(out, o)
	}
	return out
}

func (f *flow) set(o *unstructured.Unstructured, value any, fields ...string) {
	f.t.Helper()
	if err := unstructured.SetNestedField(o.Object, value, fields...); err != nil {
		f.t.Fatal(err)
	}
}

// pick keeps the objects named kind/name, in their order.
func pick(objs []*unstructured.Unstructured, keep ...string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		for _, k := range keep {
			if k == o.GetKind()+"/"+o.GetName() {
				out = append(out, o)
			}
		}
	}
	return out
}

// base are the quickstart's objects every flow needs: its namespace, the
// identity and its Secret, the Cluster and its TerraformCluster.
func (f *flow) base() []string {
	return []string{"Namespace/" + f.ns, "Namespace/captf-system", "Secret/" + f.sourceSecret(), "TerraformClusterIdentity/" + f.identity(),
		"Cluster/quickstart", "TerraformCluster/quickstart"}
}

func (f *flow) create(ctx context.Context, objs []*unstructured.Unstructured) {
	f.t.Helper()
	if err := devenv.Create(ctx, f.env.Client, objs); err != nil {
		f.t.Fatal(err)
	}
}

// waitFor polls cond until it is done; on timeout the test fails with the
// last reason cond gave (and the error of a last poll that failed).
func (f *flow) waitFor(ctx context.Context, what string, timeout time.Duration, cond func(ctx context.Context) (bool, string, error)) {
	f.t.Helper()
	start := time.Now()
	why := ""
	var lastErr error
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		ok, reason, err := cond(ctx)
		if err != nil {
			lastErr = err // an API error may pass: keep polling, and say so
			return false, nil
		}
		why, lastErr = reason, nil
		return ok, nil
	})
	if err != nil {
		if lastErr != nil {
			why += fmt.Sprintf(" (then: %v)", lastErr)
		}
		f.t.Fatalf("%s: not after %s (%v); last seen: %s", what, time.Since(start).Round(time.Second), err, why)
	}
	f.t.Logf("%s (%s)", what, time.Since(start).Round(time.Second))
}

// get reads an object of the flow's namespace; found is false when it
// does not exist.
func (f *flow) get(ctx context.Context, name string, obj client.Object) (bool, error) {
	err := f.env.Client.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: name}, obj)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

// suffix is the state suffix of an object of the flow.
func (f *flow) suffix(kind, name string) string {
	f.t.Helper()
	s, err := state.Suffix(f.ns, kind, name)
	if err != nil {
		f.t.Fatal(err)
	}
	return s
}

// readState reads an object's state from its Secrets, as the manager does.
func (f *flow) readState(ctx context.Context, kind, name string) (*state.State, []byte, error) {
	var list corev1.SecretList
	if err := f.env.Client.List(ctx, &list, client.InNamespace(f.ns),
		client.MatchingLabelsSelector{Selector: state.Selector(f.suffix(kind, name))}); err != nil {
		return nil, nil, err
	}
	return state.DecodeRaw(f.suffix(kind, name), list.Items)
}

// runs are the local node's runs of the object's Jobs of op, oldest first.
func (f *flow) runs(kind, name, op string) []localnode.Run {
	owner := state.OwnerLabels(kind, name, "")
	var out []localnode.Run
	for _, r := range f.env.Node.Runs() {
		if (r.Namespace == f.ns || evacuation.IsName(r.Namespace) && r.Labels[infrav1.OwnerNamespaceLabel] == f.ns) && r.Labels[infrav1.OwnerKindLabel] == owner[state.LabelOwnerKind] &&
			r.Labels[infrav1.OwnerNameLabel] == owner[state.LabelOwnerName] && r.Labels[infrav1.OperationLabel] == op {
			out = append(out, r)
		}
	}
	return out
}

// events are the Events regarding the object with the given reason.
func (f *flow) events(ctx context.Context, name, reason string) []eventsv1.Event {
	f.t.Helper()
	var list eventsv1.EventList
	if err := f.env.Client.List(ctx, &list, client.InNamespace(f.ns)); err != nil {
		f.t.Fatal(err)
	}
	var out []eventsv1.Event
	for _, e := range list.Items {
		if e.Regarding.Name == name && e.Reason == reason {
			out = append(out, e)
		}
	}
	return out
}

// runtimeVersion is the version the runtime binary of the tool cache
// reports, as the runner records it.
func (f *flow) runtimeVersion(rt string) string {
	f.t.Helper()
	out, err := exec.Command(filepath.Join(f.env.Tools, "bin", rt), "version", "-json").Output()
	if err != nil {
		f.t.Fatalf("%s version: %v", rt, err)
	}
	var v struct {
		Version string `json:"terraform_version"`
	}
	// It may warn about a missing CLI configuration first.
	if i := bytes.IndexByte(out, '{'); i > 0 {
		out = out[i:]
	}
	if err := json.Unmarshal(out, &v); err != nil || v.Version == "" {
		f.t.Fatalf("%s version -json: %q, %v", rt, out, err)
	}
	return v.Version
}

// ready is the object's Ready condition in a few words.
func ready(conds []metav1.Condition) string {
	if c := meta.FindStatusCondition(conds, "Ready"); c != nil {
		return fmt.Sprintf("Ready=%s %s: %s", c.Status, c.Reason, c.Message)
	}
	return "no Ready condition yet"
}

// secretsMatching lists the Secrets of the namespace with these labels.
func (f *flow) secretsMatching(ctx context.Context, set map[string]string) []corev1.Secret {
	f.t.Helper()
	var list corev1.SecretList
	if err := f.env.Client.List(ctx, &list, client.InNamespace(f.ns), client.MatchingLabelsSelector{Selector: labels.SelectorFromSet(set)}); err != nil {
		f.t.Fatal(err)
	}
	return list.Items
}
