package lifecycle_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/inputs"
	"captf.io/captf/internal/jobs"
	"captf.io/captf/internal/protection"
	"captf.io/captf/internal/records"
	"captf.io/captf/internal/roles"
	"captf.io/captf/internal/test/kubelet"
	"captf.io/captf/pkg/contract"
	"captf.io/captf/pkg/state"
)

// TestInputsHashConfirmsNoSecret: a user who can read Jobs and events
// (the view role) and knows every input of a cluster but the value of a
// Secret-sourced variable cannot test guesses of it against the inputs
// hash: what they can read (annotations, arguments, Job names, plans,
// events) is keyed with the object's plan key. A cluster applied by a
// release that wrote unkeyed h2 hashes (state, records, no plan key)
// upgrades without an apply, and a change of the secret still applies; a
// machine provisioned by that release (it renders no inputs again) gets
// its key too, and its destroy shows no h2 hash either.
func TestInputsHashConfirmsNoSecret(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "tofu")
	kubelet.StartIn(t, env, w.ns, kubelet.ExampleImages(t))
	w.checkStatuses()
	// Every version of every Job, as a viewer who watches Jobs reads them:
	// a deleting object's Jobs run without an owner reference and go as
	// soon as CAPTF releases it.
	seen := w.record(&batchv1.JobList{})
	source := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: "secret-settings", Labels: map[string]string{infrav1.VariablesLabel: "true"}},
		Data: map[string][]byte{"description": []byte("correct-horse")}}
	w.create(source)
	tc := w.newCluster(func(tc *infrav1.TerraformCluster) {
		tc.Spec.VariablesFrom = []infrav1.VariablesFromSource{{SecretRef: &infrav1.LocalObjectReference{Name: source.Name}}}
	})
	w.waitProvisioned(tc)

	guess := func(value string) string { return w.unkeyedDigest(tc, value) }
	right := guess("correct-horse")
	w.wantNoDigestReadable(seen, state.KindCluster, tc.Name, right, guess("wrong-guess"))
	tm := w.newMachine("m-0")
	w.waitProvisioned(tm)
	key := w.planKey(tc)
	applied := w.jobsOf(state.KindCluster, tc.Name, "apply")[0].Annotations[infrav1.InputsHashAnnotation]
	if want := inputs.Rekey(key, right); applied != want {
		t.Fatalf("the apply Job carries inputs hash %s, want %s: the current inputs keyed with the plan key", applied, want)
	}

	// What an earlier release left: unkeyed hashes on the state and the
	// records, and no plan key (it made one only to plan). The machine's
	// hash only has to be an h2 one: a machine never compares it.
	sum := sha256.Sum256([]byte("a machine's inputs"))
	machineDigest := "h2:" + hex.EncodeToString(sum[:])
	w.downgrade(state.KindCluster, tc.Name, right)
	w.downgrade(state.KindMachine, tm.Name, machineDigest)
	before := map[string]bool{}
	for _, j := range w.jobsOf(state.KindCluster, tc.Name, "apply") {
		before[j.Name] = true
	}
	w.passOver(tc)
	for _, j := range w.jobsOf(state.KindCluster, tc.Name, "apply") {
		if !before[j.Name] {
			t.Fatalf("apply Job %s started after the upgrade, want none: the h2 state hash names the current inputs", j.Name)
		}
	}
	if c := conditionOf(tc, infrav1.InputsAppliedCondition); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("InputsApplied %+v after the upgrade, want True", c)
	}
	if newKey := w.planKey(tc); slices.Equal(newKey, key) {
		t.Error("the plan key was not made anew")
	}

	// The secret changes: the change applies, and what a viewer reads
	// confirms neither value.
	w.update(source, func(o client.Object) { o.(*corev1.Secret).Data["description"] = []byte("battery-staple") })
	w.eventually(time.Minute, "the new secret applied", func() (bool, error) {
		return w.succeeded(state.KindCluster, tc.Name, "apply") == 2, nil
	})
	w.waitEvent(tc.Name, "InputsChanged")
	w.wantNoDigestReadable(seen, state.KindCluster, tc.Name, right, guess("battery-staple"))

	w.eventually(2*time.Minute, "the machine's plan key made anew", func() (bool, error) {
		err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: w.ns, Name: records.PlanKeyName(state.KindMachine, tm.Name)}, &corev1.Secret{})
		return err == nil, client.IgnoreNotFound(err)
	})
	// A finalizer of the test's keeps the machine, and so its conditions,
	// readable once CAPTF releases it; its destroy Job goes at the release,
	// and the recording keeps what it showed.
	const keep = "test.captf.io/keep-jobs"
	w.update(tm, func(o client.Object) { controllerutil.AddFinalizer(o, keep) })
	if err := env.Client.Delete(t.Context(), &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: tm.Name}}); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(t.Context(), tm); err != nil {
		t.Fatal(err)
	}
	w.eventually(2*time.Minute, "the machine's destroy", func() (bool, error) {
		n := 0
		for _, j := range seenJobs(t, seen, state.KindMachine, tm.Name) {
			if j.Labels[infrav1.OperationLabel] == "destroy" && j.Status.Succeeded > 0 {
				n++
			}
		}
		return n == 1, nil
	})
	w.wantNoDigestReadable(seen, state.KindMachine, tm.Name, machineDigest)
	w.update(tm, func(o client.Object) { controllerutil.RemoveFinalizer(o, keep) })
}

// downgrade leaves an object as a release before the keyed hash did:
// digest on its state and records, no plan key.
func (w *world) downgrade(kind, name, digest string) {
	w.t.Helper()
	suffix, _ := state.Suffix(w.ns, kind, name)
	for _, n := range []string{state.SecretName(suffix), records.AttemptName(kind, name), records.AppliedName(kind, name)} {
		w.update(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: n}}, func(o client.Object) {
			a := o.GetAnnotations()
			a[infrav1.InputsHashAnnotation] = digest
			o.SetAnnotations(a)
		})
	}
	key := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: records.PlanKeyName(kind, name)}}
	w.update(key, func(o client.Object) {
		o.SetFinalizers(slices.DeleteFunc(o.GetFinalizers(), func(f string) bool { return f == protection.Finalizer }))
	})
	if err := env.Client.Delete(w.t.Context(), key); err != nil {
		w.t.Fatal(err)
	}
}

// unkeyedDigest is the h2 digest a reader computes for the cluster's
// inputs with value guessed for its Secret-sourced variable description.
func (w *world) unkeyedDigest(tc *infrav1.TerraformCluster, value string) string {
	w.t.Helper()
	role := roles.Cluster{}
	w.get(tc)
	owner, err := role.Owner(w.t.Context(), env.Client, tc)
	if err != nil {
		w.t.Fatal(err)
	}
	ri, cond, err := role.Inputs(w.t.Context(), env.Client, tc, owner, nil)
	if err != nil || cond != nil {
		w.t.Fatalf("the cluster's inputs: %v %v", err, cond)
	}
	tfvars, err := ri.Tfvars()
	if err != nil {
		w.t.Fatal(err)
	}
	raw, _ := json.Marshal(value)
	d, err := inputs.Digest(contract.RoleCluster, tc.Spec.Source.Image, tfvars,
		map[string]json.RawMessage{"description": raw}, map[string]bool{"description": true}, false)
	if err != nil {
		w.t.Fatal(err)
	}
	return d
}

// wantNoDigestReadable fails when a Job of the object seen by the
// recording, deleted or not (its annotations,
// pod arguments, or a name made from the digest), a TerraformPlan, an
// event or a condition of the object shows one of the digests.
func (w *world) wantNoDigestReadable(seen *recording, kind, name string, digests ...string) {
	w.t.Helper()
	var readable []string
	var named []batchv1.Job
	for _, j := range seenJobs(w.t, seen, kind, name) {
		named = append(named, j)
		for k, v := range j.Annotations {
			readable = append(readable, k+"="+v)
		}
		for _, c := range j.Spec.Template.Spec.Containers {
			readable = append(readable, c.Args...)
		}
	}
	for _, n := range w.eventNotes(name) {
		readable = append(readable, n[1])
	}
	role, _ := roles.ForKind(kind)
	if obj := role.New(); env.Client.Get(w.t.Context(), client.ObjectKey{Namespace: w.ns, Name: name}, obj) == nil {
		for _, c := range conditions(obj) {
			readable = append(readable, c.Message)
		}
	}
	var plans infrav1.TerraformPlanList
	if err := env.Client.List(w.t.Context(), &plans, client.InNamespace(w.ns)); err != nil {
		w.t.Fatal(err)
	}
	for _, p := range plans.Items {
		readable = append(readable, p.Spec.InputsHash)
	}
	for _, d := range digests {
		hexPart := strings.TrimPrefix(d, "h2:")
		for _, r := range readable {
			if strings.Contains(r, hexPart) {
				w.t.Errorf("a viewer reads %q, which confirms a guess of the secret (digest %s)", r, d)
			}
		}
		for _, j := range named {
			op, attempt := j.Labels[infrav1.OperationLabel], j.Labels[infrav1.AttemptLabel]
			if op == "refresh" || op == "drift" || op == "restore" {
				continue // their names take a tick too
			}
			n, _ := strconv.Atoi(attempt)
			if strings.HasSuffix(j.Name, "-"+jobs.Hash6(d, op, n, "")) {
				w.t.Errorf("Job %s is named from digest %s: its name confirms a guess", j.Name, d)
			}
		}
	}
	if len(readable) == 0 {
		w.t.Fatal("nothing readable to check")
	}
}

// seenJobs is the last version the recording saw of each Job of the
// object (kind, name), deleted ones included.
func seenJobs(t *testing.T, seen *recording, kind, name string) []batchv1.Job {
	t.Helper()
	last := map[string]batchv1.Job{}
	for _, ev := range seen.changes(t) {
		j, ok := ev.Object.(*batchv1.Job)
		if !ok || j.Labels[infrav1.OwnerKindLabel] != kind || j.Labels[infrav1.OwnerNameLabel] != name {
			continue
		}
		last[j.Name] = *j
	}
	return slices.Collect(maps.Values(last))
}

// planKey reads the object's plan key.
func (w *world) planKey(tc *infrav1.TerraformCluster) []byte {
	w.t.Helper()
	s := &corev1.Secret{}
	w.eventually(2*time.Minute, "the plan key", func() (bool, error) {
		err := env.Client.Get(w.t.Context(), client.ObjectKey{Namespace: w.ns, Name: records.PlanKeyName(state.KindCluster, tc.Name)}, s)
		return err == nil && s.DeletionTimestamp == nil, client.IgnoreNotFound(err)
	})
	return s.Data[records.PlanKeyData]
}
