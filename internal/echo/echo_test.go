package echo

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	infrav1 "captf.io/captf/api/v1alpha1"
)

// TestOwnEcho: a filter takes an update for the echo of a status
// write only when it shows the object exactly as the pass meant to leave
// it.
func TestOwnEcho(t *testing.T) {
	intended := &infrav1.TerraformMachine{ObjectMeta: metav1.ObjectMeta{UID: "u1", ResourceVersion: "10", Generation: 1}}
	// The pass sets conditions at a time with nanoseconds; the API serves
	// seconds.
	at := time.Date(2026, 12, 3, 10, 0, 0, 123456789, time.UTC)
	intended.Status.Conditions = []metav1.Condition{{Type: infrav1.ReadyCondition, Status: metav1.ConditionTrue, Reason: "Ready", LastTransitionTime: metav1.NewTime(at)}}
	served := func(mutate func(*infrav1.TerraformMachine)) *infrav1.TerraformMachine {
		w := intended.DeepCopy()
		w.ResourceVersion = "11"
		w.Status.Conditions[0].LastTransitionTime = metav1.NewTime(at.Truncate(time.Second))
		w.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "captf", Operation: metav1.ManagedFieldsOperationUpdate}}
		if mutate != nil {
			mutate(w)
		}
		return w
	}
	testCases := []struct {
		name   string
		mutate func(*infrav1.TerraformMachine)
		echo   bool
	}{
		{"the write as meant", nil, true},
		{"a spec write of the same pass moved the generation", func(w *infrav1.TerraformMachine) { w.Generation = 2 }, false},
		{"a label came in between", func(w *infrav1.TerraformMachine) { w.Labels = map[string]string{"a": "b"} }, false},
		{"a status field written by another hand", func(w *infrav1.TerraformMachine) { w.Status.PendingRefreshes = 3 }, false},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			f := &Filter{}
			if f.OwnEcho(served(nil)) {
				t.Fatal("an update was taken for an echo before any write")
			}
			f.ExpectWrites(intended)
			if got := f.OwnEcho(served(tc.mutate)); got != tc.echo {
				t.Fatalf("OwnEcho = %v, want %v", got, tc.echo)
			}
			if f.OwnEcho(served(nil)) {
				t.Error("a second update was taken for the echo: the expectation ends with the first")
			}
			f.ExpectWrites(intended)
			f.ForgetEcho(intended)
			if f.OwnEcho(served(nil)) {
				t.Error("a forgotten write was still taken for an echo")
			}
		})
	}
}

// TestOwnJobEcho: the engine takes a Job's creation for its own only when
// it created that Job, once; and a Job's update for the echo of its
// bookkeeping marks only when the update shows what a pass reads of the
// Job exactly as the marks leave it (pod counters and versions aside).
func TestOwnJobEcho(t *testing.T) {
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "captf-m-m-apply-a1-abcdef", UID: "j1", ResourceVersion: "5",
		Annotations: map[string]string{infrav1.OperationLabel: "apply"}}}
	job.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
	f := &Filter{}
	if f.OwnJobCreate(job) {
		t.Error("a Job the engine did not create was taken for its own")
	}
	f.ExpectJobCreate(job)
	if !f.OwnJobCreate(job) {
		t.Error("the creation of a Job the engine created was not taken for its own")
	}
	if f.OwnJobCreate(job) {
		t.Error("a second creation event was taken for the engine's own")
	}

	marked := job.DeepCopy()
	marked.Annotations[infrav1.BookkeptAnnotation] = "true"
	served := func(mutate func(*batchv1.Job)) *batchv1.Job {
		j := marked.DeepCopy()
		j.ResourceVersion = "9"
		j.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "captf"}}
		j.Status.Succeeded, j.Status.Ready = 1, ptr.To[int32](0)
		if mutate != nil {
			mutate(j)
		}
		return j
	}
	testCases := []struct {
		name   string
		mutate func(*batchv1.Job)
		echo   bool
	}{
		{"the marks as written", nil, true},
		{"another annotation came in between", func(j *batchv1.Job) { j.Annotations["other"] = "x" }, false},
		{"the Job is being deleted", func(j *batchv1.Job) { j.DeletionTimestamp = &metav1.Time{} }, false},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			f := &Filter{}
			f.ExpectJobUpdate(marked)
			if f.OwnJobCreate(job) {
				t.Error("an expected update was taken for a creation")
			}
			if got := f.OwnJobUpdate(served(tc.mutate)); got != tc.echo {
				t.Fatalf("OwnJobUpdate = %v, want %v", got, tc.echo)
			}
			if f.OwnJobUpdate(served(nil)) {
				t.Error("a second update was taken for the echo: the expectation ends with the first")
			}
		})
	}
	f.ExpectJobUpdate(marked)
	f.ForgetJobEcho(job)
	if f.OwnJobUpdate(served(nil)) {
		t.Error("a forgotten mark was still taken for an echo")
	}
}
