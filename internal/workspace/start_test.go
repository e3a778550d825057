package workspace

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/metrics"
	"captf.io/captf/internal/roles"
)

// TestAVoidPassForgetsTheWaitItAnnouncedPastItsGate: a void pass emits
// what it did before its gate, not the wait it announced past it; that
// wait is not taken as announced, so the pass made again announces it.
func TestAVoidPassForgetsTheWaitItAnnouncedPastItsGate(t *testing.T) {
	recorder := events.NewFakeRecorder(10)
	e := &Engine{Recorder: recorder}
	obj := &infrav1.TerraformCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c", UID: "u1"}}
	slots := metrics.LeaseWaits.WithLabelValues(roles.Cluster{}.Kind(), "job_slot")
	counted := testutil.ToFloat64(slots)
	void := &pass{e: e, role: roles.Cluster{}, obj: obj}
	void.eventf(corev1.EventTypeNormal, "JobSucceeded", "Job j succeeded") // before the gate
	void.armedEvents = len(void.events)
	void.waitEvent(infrav1.WaitingForJobSlotReason, "4 of 4 slots are taken")
	void.voidEvents()
	if n, waits := countEvents(recorder, "JobSucceeded"), countEvents(recorder, infrav1.WaitingForJobSlotReason); n != 1 || waits != 0 {
		t.Fatalf("the void pass emitted %d JobSucceeded and %d WaitingForJobSlot events, want 1 and 0", n, waits)
	}
	again := &pass{e: e, role: roles.Cluster{}, obj: obj}
	again.waitEvent(infrav1.WaitingForJobSlotReason, "4 of 4 slots are taken")
	if len(again.events) != 1 {
		t.Errorf("the pass made again queued %d events for the wait, want it announced once: the void pass's announcement never went out", len(again.events))
	}
	again.emit()
	if n := testutil.ToFloat64(slots) - counted; n != 1 {
		t.Errorf("captf_lease_waits_total{reason=job_slot} counted the wait %v times, want once (by the pass that announced it)", n)
	}
}

// TestAPassWhoseStatusFailedAnnouncesNoWait: a pass whose status patch
// fails emits nothing; the wait it met is not taken as announced, so the
// next pass that meets it announces it, and the wait counts once in
// captf_lease_waits_total (it counted at each pass that met it).
func TestAPassWhoseStatusFailedAnnouncesNoWait(t *testing.T) {
	recorder := events.NewFakeRecorder(10)
	e := &Engine{Recorder: recorder}
	obj := &infrav1.TerraformCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c", UID: "u1"}}
	waits := metrics.LeaseWaits.WithLabelValues(roles.Cluster{}.Kind(), "run_lease")
	counted := testutil.ToFloat64(waits)
	failed := &pass{e: e, role: roles.Cluster{}, obj: obj}
	failed.waitEvent(infrav1.WaitingForRunLeaseReason, "Job j holds the run lease") // and emits nothing
	next := &pass{e: e, role: roles.Cluster{}, obj: obj}
	next.waitEvent(infrav1.WaitingForRunLeaseReason, "Job j holds the run lease")
	if len(next.events) != 1 {
		t.Errorf("the next pass queued %d events for the wait, want it announced: the failed pass's announcement never went out", len(next.events))
	}
	next.emit()
	again := &pass{e: e, role: roles.Cluster{}, obj: obj}
	again.waitEvent(infrav1.WaitingForRunLeaseReason, "Job j holds the run lease")
	if len(again.events) != 0 {
		t.Errorf("a pass after an announced wait queued %d events for it, want none", len(again.events))
	}
	again.emit()
	if n := testutil.ToFloat64(waits) - counted; n != 1 {
		t.Errorf("captf_lease_waits_total{reason=run_lease} counted the wait %v times, want once", n)
	}
}
