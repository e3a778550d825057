package workspace

import (
	"encoding/json"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/custody"
	"captf.io/captf/internal/decide"
	"captf.io/captf/internal/roles"
	"captf.io/captf/internal/test/envtest"
	"captf.io/captf/pkg/state"
)

// TestForeignLockReleasedDuringAJob: a state lock held by someone else
// (StateLocked) does not stop a Job from starting; the Job waits for it.
// While the Job runs the state is not read, so StateReadable used to keep
// saying StateLocked after the holder let go, until the Job ended. Now a
// pass during the Job reads the lock again: held, StateLocked stays;
// released (or taken by the object's own Job), StateReadable says what the
// state read said before the lock.
func TestForeignLockReleasedDuringAJob(t *testing.T) {
	envtest.Require(t, env)
	ctx := t.Context()
	role := roles.Cluster{}
	obj := newCluster(t, "lock-held", "c")
	suffix, err := state.Suffix(obj.Namespace, role.Kind(), obj.Name)
	if err != nil {
		t.Fatal(err)
	}
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: obj.Namespace, Name: state.LockLeaseName(suffix)}}
	lock := func(id, who string) {
		t.Helper()
		info, _ := json.Marshal(custody.LockInfo{ID: id, Operation: "OperationTypeApply", Who: who, Created: "2026-12-05T01:00:00Z"})
		lease.Annotations = map[string]string{custody.LockInfoAnnotation: string(info)}
		lease.Spec.HolderIdentity = ptr.To(id)
		var err error
		if lease.ResourceVersion == "" {
			err = env.Client.Create(ctx, lease)
		} else {
			err = env.Client.Update(ctx, lease)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	read := metav1.Condition{Type: infrav1.StateReadableCondition, Status: metav1.ConditionTrue, Reason: infrav1.StateReadReason, Message: "Read serial 4 (2 resources, 900 bytes compressed)"}
	obj.Status.Conditions = []metav1.Condition{read}
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: obj.Namespace, Name: "captf-c-c-apply-a1-0a1b2c"}}
	e := &Engine{Client: env.Client, APIReader: env.Client}
	// runPass runs the lock steps of one pass (checkLock without a Job, as
	// after the state read, else checkForeignLock) and writes its status.
	runPass := func(active bool) *metav1.Condition {
		t.Helper()
		p := &pass{e: e, role: role, obj: obj, w: role.View(obj), decided: &decide.Decision{}}
		if active {
			p.active = job
			err = p.checkForeignLock(ctx)
		} else {
			p.set(read) // what observeState reported
			err = p.checkLock(ctx)
		}
		if err != nil {
			t.Fatal(err)
		}
		st := &obj.Status.WorkspaceStatus
		endPass(p, st, true)
		return meta.FindStatusCondition(st.Conditions, infrav1.StateReadableCondition)
	}

	lock("4a1f-foreign", "alice@laptop")
	if c := runPass(false); c.Reason != infrav1.StateLockedReason {
		t.Fatalf("a foreign lock, no Job: StateReadable = %+v, want StateLocked", c)
	}
	if c := runPass(true); c.Reason != infrav1.StateLockedReason {
		t.Fatalf("a foreign lock still held while the Job waits: StateReadable = %+v, want StateLocked", c)
	}
	// Alice lets go and the object's own Job takes the lock.
	lock("77aa-own", "root@"+job.Name+"-x1b2c")
	if c := runPass(true); c.Reason != infrav1.StateReadReason || c.Message != read.Message {
		t.Fatalf("the foreign lock released while the Job runs: StateReadable = %+v, want the state read before it (%s)", c, read.Message)
	}

	// A destroy run from the object's evacuation namespace cannot see the
	// lock it saw: StateLocked stays until the state is read.
	lock("4a1f-foreign", "alice@laptop")
	if c := runPass(false); c.Reason != infrav1.StateLockedReason {
		t.Fatalf("a foreign lock again: StateReadable = %+v, want StateLocked", c)
	}
	p := &pass{e: e, role: role, obj: obj, w: role.View(obj), active: job, evac: evacuated{ns: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "captf-evac-x"}}}}
	if err := p.checkForeignLock(ctx); err != nil {
		t.Fatal(err)
	}
	if c := p.reported(infrav1.StateReadableCondition); c == nil || c.Reason != infrav1.StateLockedReason {
		t.Errorf("a Job in the evacuation namespace: StateReadable reported %+v, want StateLocked again", c)
	}

	// A lock never covers a hold: a state that cannot be read says so.
	corrupt := metav1.Condition{Type: infrav1.StateReadableCondition, Status: metav1.ConditionFalse, Reason: infrav1.StateCorruptReason, Message: "State s cannot be read (StateCorrupt)"}
	p = &pass{e: e, role: role, obj: obj, w: role.View(obj)}
	p.set(corrupt)
	if err := p.checkLock(ctx); err != nil {
		t.Fatal(err)
	}
	if c := p.reported(infrav1.StateReadableCondition); c.Reason != infrav1.StateCorruptReason {
		t.Errorf("a corrupt state under a foreign lock reports %+v, want StateCorrupt (no Job runs)", c)
	}
}
