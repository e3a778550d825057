package workspace

import (
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/decide"
	"captf.io/captf/internal/jobs"
	"captf.io/captf/internal/records"
	"captf.io/captf/internal/roles"
	"captf.io/captf/internal/runner/result"
	"captf.io/captf/internal/test/envtest"
)

// TestEvacuatedJobMarksTheRecordAtHome: a destroy evacuated out of a
// terminating namespace runs in captf-evac-…, but the object's attempt
// record stays in the object's namespace. What the Job's outcome leaves
// on that record (a rescued state's serial, an image that could not be
// pulled) must land there: the evacuation namespace has no record, and a
// mark written (or looked for) there is lost, silently, so a later destroy
// would run over a rejected state, or the image fallback would never move
// on.
func TestEvacuatedJobMarksTheRecordAtHome(t *testing.T) {
	envtest.Require(t, env)
	ctx := t.Context()
	role := roles.Cluster{}
	const home, evac = "evacuated-home", "captf-evac-recordtest"
	obj := newCluster(t, home, "c")
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: evac}}); err != nil {
		t.Fatal(err)
	}
	rec := records.Record{Job: "c-apply-1", InputsHash: "h3:x", MainTF: []byte("{}"), Tfvars: []byte("{}")}
	if err := records.WriteAttempt(ctx, env.Client, env.Client, obj, role.Kind(), rec); err != nil {
		t.Fatal(err)
	}
	attempt := func() records.Record {
		t.Helper()
		a, _, err := records.Load(ctx, env.Client, home, role.Kind(), obj.Name)
		if err != nil || a == nil {
			t.Fatalf("reading the attempt record: %v (found: %t)", err, a != nil)
		}
		return *a
	}
	e := &Engine{Client: env.Client, APIReader: env.Client}
	newPass := func() *pass {
		return &pass{e: e, role: role, obj: obj, w: role.View(obj), before: obj.DeepCopy()}
	}
	evacJob := func(name string, op decide.Operation) *batchv1.Job {
		return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: evac, Name: name,
			Labels: map[string]string{infrav1.OperationLabel: string(op)}}}
	}

	t.Run("a rescued state", func(t *testing.T) {
		o := jobs.Outcome{Job: evacJob("c-destroy-1", decide.OpDestroy), Op: decide.OpDestroy, PodFound: true,
			Result: &result.Document{Rescue: &result.Rescue{Backup: "b", Serial: 7, Chunks: 1}}}
		if err := newPass().recordOutcome(ctx, o); err != nil {
			t.Fatal(err)
		}
		if got := attempt().RescuedSerial; got != "7" {
			t.Errorf("the attempt record in %s says rescued serial %q, want 7: no apply or destroy may run over the rejected state", home, got)
		}
	})

	t.Run("an image that cannot be pulled", func(t *testing.T) {
		p := newPass()
		p.running.fallback = &fallback{job: evacJob("c-destroy-2", decide.OpDestroy), image: "example.test/cluster:1", reason: "ErrImagePull", next: "example.test/cluster:0"}
		if err := p.fallBackImage(ctx); err != nil {
			t.Fatalf("the fallback failed (%v): it looked for the attempt record in the evacuation namespace", err)
		}
		if got := attempt().UnpullableImages; len(got) != 1 || got[0] != "example.test/cluster:1" {
			t.Errorf("the attempt record in %s lists unpullable images %v, want the destroy's image", home, got)
		}
	})

	// Nothing was written in the evacuation namespace.
	var left corev1.SecretList
	if err := env.Client.List(ctx, &left, client.InNamespace(evac)); err != nil {
		t.Fatal(err)
	}
	if len(left.Items) != 0 {
		t.Errorf("%d Secrets in the evacuation namespace, want none", len(left.Items))
	}
}
