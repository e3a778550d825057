package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/devenv"
	"captf.io/captf/internal/evacuation"
	"captf.io/captf/pkg/state"
)

// Attacks on the evacuated destroy (a deleting object whose namespace is
// being deleted is destroyed from an evacuation namespace of its own):
// what an unlucky user does around it, and what they must see; flows of
// TestFlows. A namespace made in advance under the evacuation name cannot
// happen (the name is random, recorded with its UID): internal/evacuation
// tests it.

// evacCondition is the object's ApplyJobSucceeded condition (a destroy
// reports there) and whether the object still exists.
func (f *flow) evacCondition(ctx context.Context, kind, name string) (*metav1.Condition, *unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(infrav1.GroupVersion.WithKind(kind))
	found, err := f.get(ctx, name, u)
	if err != nil || !found {
		return nil, nil, err
	}
	raw, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range raw {
		m, _ := c.(map[string]any)
		if m["type"] == infrav1.ApplyJobSucceededCondition {
			return &metav1.Condition{Type: infrav1.ApplyJobSucceededCondition, Status: metav1.ConditionStatus(fmt.Sprint(m["status"])),
				Reason: fmt.Sprint(m["reason"]), Message: fmt.Sprint(m["message"])}, u, nil
		}
	}
	return nil, u, nil
}

// The evacuated destroy fails (its Jobs get a 1-second deadline, and the
// module's destroy starts with a slow step, so nothing is destroyed yet
// however fast the machine) and backs off; meanwhile a user, taking
// captf-evac-<uid> for litter, deletes that namespace, which takes a
// while to go (here: a finalizer of the test's own). The state copy there goes with it; the state in the object's
// namespace must stay whole: the copy back never mirrors a copy that
// vanished. Once the deadline is lifted, the destroy runs from a new
// evacuation namespace and destroys every resource.
func evacCopyLost(t *testing.T, ctx context.Context, f *flow) {
	objs := pick(f.quickstart("tofu"), f.base()...)
	for _, o := range objs {
		if o.GetKind() == "TerraformCluster" {
			f.set(o, devenv.ExampleImage("slow-destroy-cluster", "tofu"), "spec", "source", "image")
		}
	}
	resources := f.provision(ctx, objs)
	const key = "TerraformCluster/quickstart"
	suffix := f.suffix(state.KindCluster, "quickstart")
	tc := &infrav1.TerraformCluster{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "quickstart"}}
	patch := func(body string) int64 {
		t.Helper()
		if err := f.env.Client.Patch(ctx, tc, client.RawPatch(types.MergePatchType, []byte(body))); err != nil {
			t.Fatalf("patching the TerraformCluster with %s: %v", body, err)
		}
		return tc.Generation
	}
	patch(`{"spec":{"jobs":{"activeDeadlineSeconds":1,"lockTimeoutSeconds":0}}}`)

	f.deleteWith(ctx, objs, "Namespace", f.ns, metav1.DeletePropagationBackground)
	evac := ""
	f.waitFor(ctx, "a destroy Job failed in the evacuation namespace and no Job runs there", 3*time.Minute, func(ctx context.Context) (bool, string, error) {
		if _, err := f.get(ctx, "quickstart", tc); err != nil {
			return false, "", err
		}
		evac, _, _ = strings.Cut(tc.Annotations[infrav1.EvacuationNamespaceAnnotation], "/")
		if evac == "" {
			return false, "no evacuation namespace recorded", nil
		}
		ns := &corev1.Namespace{}
		if err := f.env.Client.Get(ctx, client.ObjectKey{Name: evac}, ns); err != nil {
			return false, "", client.IgnoreNotFound(err)
		}
		var list batchv1.JobList
		if err := f.env.Client.List(ctx, &list, client.InNamespace(evac)); err != nil {
			return false, "", err
		}
		failed, running := 0, 0
		for _, j := range list.Items {
			switch {
			case jobCondition(&j, batchv1.JobFailed):
				failed++
			case !jobCondition(&j, batchv1.JobComplete):
				running++
			}
		}
		return failed > 0 && running == 0 && tc.Status.ActiveJob == nil && ns.Annotations[evacuation.StateCopiedAnnotation] == "true",
			fmt.Sprintf("%d failed, %d running, activeJob %v, state-copied %q", failed, running, tc.Status.ActiveJob, ns.Annotations[evacuation.StateCopiedAnnotation]), nil
	})
	kept, err := f.instances(ctx, "TerraformCluster", "quickstart")
	if err != nil || kept == 0 {
		t.Fatalf("after the failed destroy the state in %s holds %d resources (%v)", f.ns, kept, err)
	}
	t.Logf("the state holds %d of the %d resources after the failed destroy", kept, resources[key])

	// The evacuation namespace is deleted; it stays Terminating a while.
	hold := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: evac, Name: "slow-to-go", Finalizers: []string{"e2e.captf.io/hold"}}}
	if err := f.env.Client.Create(ctx, hold); err != nil {
		t.Fatal(err)
	}
	// The hold goes on a retry (the namespace controller writes the
	// ConfigMap too); a release that fails would keep the namespace, and
	// the flow, waiting for ever, so it fails the test by name.
	release := func() {
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cm := &corev1.ConfigMap{}
			if err := f.env.Client.Get(context.Background(), client.ObjectKeyFromObject(hold), cm); err != nil {
				return err
			}
			if !controllerutil.RemoveFinalizer(cm, "e2e.captf.io/hold") {
				return nil
			}
			return f.env.Client.Update(context.Background(), cm)
		})
		if client.IgnoreNotFound(err) != nil {
			t.Errorf("releasing the hold on ConfigMap %s/%s: %v", evac, hold.Name, err)
		}
	}
	t.Cleanup(release)
	if err := f.env.Client.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: evac}}); err != nil {
		t.Fatal(err)
	}
	f.waitFor(ctx, "the state copy in the terminating evacuation namespace is gone", controllerWait, func(ctx context.Context) (bool, string, error) {
		var list corev1.SecretList
		if err := f.env.Client.List(ctx, &list, client.InNamespace(evac), client.MatchingLabelsSelector{Selector: state.Selector(suffix)}); err != nil {
			return false, "", err
		}
		return len(list.Items) == 0, fmt.Sprintf("%d state Secrets left", len(list.Items)), nil
	})
	// A harmless edit, so that a pass completed after the copy vanished
	// shows as status.observedGeneration.
	gen := patch(`{"spec":{"jobs":{"failedJobsHistoryLimit":5}}}`)
	f.waitFor(ctx, "the manager completed a pass while the evacuation namespace was going", 3*time.Minute, func(ctx context.Context) (bool, string, error) {
		if _, _, err := f.readState(ctx, "TerraformCluster", "quickstart"); err != nil {
			return true, fmt.Sprintf("the state is unreadable: %v", err), nil
		}
		found, err := f.get(ctx, "quickstart", tc)
		if err != nil {
			return false, "", err
		}
		if !found {
			return true, "the TerraformCluster is gone", nil
		}
		return tc.Status.ObservedGeneration >= gen, fmt.Sprintf("observedGeneration %d, want %d; %s", tc.Status.ObservedGeneration, gen, ready(tc.Status.Conditions)), nil
	})
	if n, err := f.instances(ctx, "TerraformCluster", "quickstart"); err != nil || n != kept {
		found, _ := f.get(ctx, "quickstart", tc)
		t.Errorf("STATE LOST: the state in %s held %d resources before the evacuation namespace was deleted, now %d (%v); TerraformCluster still there %v: %s",
			f.ns, kept, n, err, found, conditionsSummary(tc.Status.Conditions))
		// Nothing can be destroyed any more: let it go (Retain) so that
		// nothing of the flow is left.
		release()
		f.evacRetainAndRelease(ctx, objs)
		return
	}

	// The way out: the namespace goes, the deadline is lifted.
	patch(`{"spec":{"jobs":{"activeDeadlineSeconds":null,"lockTimeoutSeconds":null}}}`)
	release()
	f.waitDestroyed(ctx, map[string]int{key: kept}, "tofu")
	f.evacuatedDestroys(resources)
	f.evacuationsGone(ctx, objs)
}

func jobCondition(j *batchv1.Job, t batchv1.JobConditionType) bool {
	for _, c := range j.Status.Conditions {
		if c.Type == t && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

func conditionsSummary(conds []metav1.Condition) string {
	var out []string
	for _, c := range conds {
		if c.Status != metav1.ConditionTrue {
			out = append(out, fmt.Sprintf("%s=%s %s: %s", c.Type, c.Status, c.Reason, c.Message))
		}
	}
	return strings.Join(out, "; ")
}

// A cluster whose identity is a local Secret (identityRef kind Secret):
// the namespace controller deletes that Secret with the namespace (here
// for sure before the destroy: the cluster is paused for maintenance when
// its namespace is deleted, and unpaused once the Secret is gone). The
// cluster must either be destroyed, or be held with a condition naming a
// way out a user can take in a terminating namespace (not "create it",
// which Kubernetes refuses there). The way out is then taken: Retain, and
// the kept Secrets released; nothing is left.
func evacLocalIdentity(t *testing.T, ctx context.Context, f *flow) {
	const local = "local-credentials"
	objs := pick(f.quickstart("tofu"), f.base()...)
	for _, o := range objs {
		if o.GetKind() == "TerraformCluster" {
			f.set(o, map[string]any{"kind": string(infrav1.IdentityKindSecret), "name": local}, "spec", "identityRef")
		}
	}
	secret := &unstructured.Unstructured{}
	secret.SetAPIVersion("v1")
	secret.SetKind("Secret")
	secret.SetNamespace(f.ns)
	secret.SetName(local)
	f.set(secret, map[string]any{"NOOP_TOKEN": "local-token"}, "stringData")
	objs = slices.Insert(objs, 1, secret)
	resources := f.provision(ctx, objs)
	tc := &infrav1.TerraformCluster{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "quickstart"}}
	patch := func(body string) {
		t.Helper()
		if err := f.env.Client.Patch(ctx, tc, client.RawPatch(types.MergePatchType, []byte(body))); err != nil {
			t.Fatalf("patching the TerraformCluster with %s: %v", body, err)
		}
	}
	patch(`{"metadata":{"annotations":{"` + infrav1.PausedAnnotation + `":""}}}`)
	f.deleteWith(ctx, objs, "Namespace", f.ns, metav1.DeletePropagationBackground)
	f.waitFor(ctx, "the namespace controller deleted the local identity Secret", controllerWait, func(ctx context.Context) (bool, string, error) {
		found, err := f.get(ctx, local, &corev1.Secret{})
		return !found, "still there", err
	})
	patch(`{"metadata":{"annotations":{"` + infrav1.PausedAnnotation + `":null}}}`)

	held := ""
	f.waitFor(ctx, "the cluster is destroyed, or held with a condition", 3*time.Minute, func(ctx context.Context) (bool, string, error) {
		c, u, err := f.evacCondition(ctx, "TerraformCluster", "quickstart")
		if err != nil {
			return false, "", err
		}
		if u == nil {
			return true, "", nil
		}
		if c != nil && c.Status == metav1.ConditionFalse &&
			(c.Reason == infrav1.NamespaceTerminatingReason || c.Reason == infrav1.IdentityNotAllowedReason) {
			held = c.Reason + ": " + c.Message
			return true, "", nil
		}
		return false, conditionsOf(u), nil
	})
	if held == "" {
		f.waitDestroyed(ctx, resources, "tofu")
		f.evacuatedDestroys(resources)
		f.evacuationsGone(ctx, objs)
		return
	}
	t.Logf("held: %s", held)
	if !strings.HasPrefix(held, infrav1.NamespaceTerminatingReason) || !strings.Contains(held, "runbook") {
		t.Errorf("the held destroy names no way out a user can take in the terminating namespace %s (it cannot take a new Secret): %s", f.ns, held)
	}
	// The way out the NamespaceTerminating message gives (the destroy by
	// hand skipped: noop resources): Retain, then release the kept Secrets.
	f.evacRetainAndRelease(ctx, objs)
}

// evacRetainAndRelease takes the manual way out for the flow's held
// TerraformCluster: spec.deletionPolicy Retain, then the kept Secrets lose
// their protection finalizer; the namespaces go and nothing is left.
func (f *flow) evacRetainAndRelease(ctx context.Context, objs []*unstructured.Unstructured) {
	f.t.Helper()
	tc := &infrav1.TerraformCluster{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "quickstart"}}
	if err := f.env.Client.Patch(ctx, tc, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"deletionPolicy":"Retain"}}`))); err != nil {
		f.t.Fatalf("setting deletionPolicy Retain: %v", err)
	}
	f.waitFor(ctx, "the retained TerraformCluster is gone", controllerWait, func(ctx context.Context) (bool, string, error) {
		found, err := f.get(ctx, "quickstart", &infrav1.TerraformCluster{})
		return !found, "still there", err
	})
	var list corev1.SecretList
	if err := f.env.Client.List(ctx, &list, client.InNamespace(f.ns)); err != nil {
		f.t.Fatal(err)
	}
	for i := range list.Items {
		s := &list.Items[i]
		if controllerutil.RemoveFinalizer(s, infrav1.StateProtectionFinalizer) {
			if err := f.env.Client.Update(ctx, s); err != nil && !apierrors.IsNotFound(err) {
				f.t.Errorf("releasing %s: %v", s.Name, err)
			}
		}
	}
	f.evacuationsGone(ctx, objs)
}

// A Terraform state split across several Secrets (over 1 MiB compressed)
// makes the round trip: every piece is copied into the evacuation
// namespace, the destroy there shrinks the state to one piece, the copy
// back deletes the surplus pieces in the terminating namespace (it can
// create none), and the cluster is destroyed with every resource.
func evacChunkedState(t *testing.T, ctx context.Context, f *flow) {
	objs := pick(f.quickstart("terraform"), f.base()...)
	for _, o := range objs {
		if o.GetKind() == "TerraformCluster" {
			f.set(o, devenv.ExampleImage("large-cluster", "terraform"), "spec", "source", "image")
		}
	}
	resources := f.provision(ctx, objs)
	st, _, err := f.readState(ctx, "TerraformCluster", "quickstart")
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Secrets) < 2 {
		t.Fatalf("the state is in %d Secret(s), want it split", len(st.Secrets))
	}
	t.Logf("the state (serial %d, %d resources) is split across %d Secrets", st.Serial, st.ManagedResources, len(st.Secrets))
	f.deleteWith(ctx, objs, "Namespace", f.ns, metav1.DeletePropagationBackground)
	f.waitDestroyed(ctx, resources, "terraform")
	f.evacuatedDestroys(resources)
	f.evacuationsGone(ctx, objs)
}
