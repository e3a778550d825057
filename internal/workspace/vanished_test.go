package workspace

import (
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/decide"
	"captf.io/captf/internal/records"
	"captf.io/captf/internal/roles"
	"captf.io/captf/internal/test/envtest"
)

// TestAVanishedJobIsKeptUntilRecorded: the apply Job status.activeJob
// names is gone before it was bookkept. While its attempt record refuses
// the mark (an admission policy), the pass fails, reports nothing, and
// its status still names the Job (a failed pass writes its status), so
// the next pass finds it gone again; once the record takes the mark, the
// apply is recorded as possibly applied and reported as vanished.
func TestAVanishedJobIsKeptUntilRecorded(t *testing.T) {
	envtest.Require(t, env)
	ctx := t.Context()
	role := roles.Cluster{}
	e := &Engine{Client: env.Client, APIReader: env.Client}
	const ns, job = "vanished-record", "c-apply-1"
	obj := newCluster(t, ns, "c", role.Finalizer())
	obj.Status.ActiveJob = &infrav1.ActiveJob{Name: job, Operation: infrav1.OperationApply, Attempt: 1}
	if err := env.Client.Status().Update(ctx, obj); err != nil {
		t.Fatal(err)
	}
	attempt, err := records.Secret(ns, records.OwnerReference(obj, role.Kind()), records.Record{Job: job, InputsHash: "h3:1",
		MainTF: []byte("{}"), Tfvars: []byte("{}")}, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Create(ctx, attempt); err != nil {
		t.Fatal(err)
	}
	allow := envtest.Refuse(t, env.Client, envtest.Refusal{Namespace: ns, Resource: "secrets",
		Operations: []admissionv1.OperationType{admissionv1.Create, admissionv1.Update},
		Expression: "!has(object.metadata.annotations) || !('" + infrav1.MayHaveAppliedAnnotation + "' in object.metadata.annotations)",
		Message:    "no marks here",
		Probe: func() client.Object {
			return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "probe",
				Annotations: map[string]string{infrav1.MayHaveAppliedAnnotation: "true"}}}
		}})
	pass := func() (*pass, error) {
		t.Helper()
		read := &infrav1.TerraformCluster{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), read); err != nil {
			t.Fatal(err)
		}
		p := &pass{e: e, role: role, obj: read, w: role.View(read), before: read.DeepCopy()}
		if err := p.observeJobs(ctx); err != nil {
			t.Fatal(err)
		}
		return p, p.doFirstChores(ctx, decide.Upkeep{VanishedJob: p.vanished.job != nil})
	}

	p, err := pass()
	if err == nil {
		t.Fatal("the pass recorded the vanished Job although its record refuses the mark")
	}
	if aj := p.w.Status.ActiveJob; aj == nil || aj.Name != job {
		t.Errorf("after a failed record, status.activeJob = %+v, want it to keep naming %s (else no pass finds the Job again)", aj, job)
	}
	if len(p.conds) != 0 || len(p.events) != 0 {
		t.Errorf("a vanished Job not recorded was reported: conditions %+v, events %+v", p.conds, p.events)
	}

	allow()
	p, err = pass()
	if err != nil {
		t.Fatal(err)
	}
	if p.w.Status.ActiveJob != nil {
		t.Errorf("status.activeJob = %+v once the vanished Job is recorded, want none", p.w.Status.ActiveJob)
	}
	rec, _, err := records.Load(ctx, env.Client, ns, role.Kind(), "c")
	if err != nil || rec == nil || !rec.MayHaveApplied || rec.UnconfirmedApply != job {
		t.Fatalf("attempt record = %+v (%v), want %s marked as possibly applied and unconfirmed", rec, err, job)
	}
	if len(p.conds) != 1 || p.conds[0].Type != infrav1.ApplyJobSucceededCondition || !strings.Contains(p.conds[0].Message, "vanished") {
		t.Errorf("conditions %+v, want ApplyJobSucceeded saying %s vanished", p.conds, job)
	}
	if len(p.events) != 1 || p.events[0].Reason != "JobInterrupted" {
		t.Errorf("events %+v, want one JobInterrupted", p.events)
	}
}
