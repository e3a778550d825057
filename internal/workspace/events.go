package workspace

// What a pass reports besides its status writes: conditions to set,
// events to emit once the status is written, and the once-per-wait
// events.

import (
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/conditions"
	"captf.io/captf/internal/metrics"
)

// waitEvent queues a wait's event once per wait: the wait counts as
// announced once its event is emitted (emit), so that a pass that emits
// nothing (its status not written) or drops it (a void pass, past its
// gate) leaves the announcement to the next pass.
func (p *pass) waitEvent(reason, note string) {
	if last, ok := p.e.waits.Load(p.obj.GetUID()); ok && last == reason {
		return
	}
	p.eventf(corev1.EventTypeNormal, reason, "%s", note)
	p.waitEvents = append(p.waitEvents, len(p.events)-1)
}

// waitOver ends the object's current wait: its next wait emits again.
func (p *pass) waitOver() { p.e.waits.Delete(p.obj.GetUID()) }

// lookAgainIn makes this pass's wait look again within d.
func (p *pass) lookAgainIn(d time.Duration) {
	if p.soonest == 0 || d < p.soonest {
		p.soonest = d
	}
}

// set records a condition for the status patch.
func (p *pass) set(c metav1.Condition) {
	for i := range p.conds {
		if p.conds[i].Type == c.Type {
			p.conds[i] = c
			return
		}
	}
	p.conds = append(p.conds, c)
}

// eventf queues an event for after the status patch.
func (p *pass) eventf(typ, reason, format string, args ...any) {
	p.events = append(p.events, conditions.Event{Type: typ, Reason: reason, Note: fmt.Sprintf(format, args...)})
}

// voidEvents emits what a void pass did before its gate: that happened.
// What came after it did not: a wait it announced there goes unsaid, so
// that the pass made again, or the next, announces it.
func (p *pass) voidEvents() {
	p.events = p.events[:p.armedEvents]
	p.waitEvents = slices.DeleteFunc(p.waitEvents, func(i int) bool { return i >= p.armedEvents })
	p.emit()
}

// emit emits the pass's events, but those the void pass before it
// emitted already, and takes the waits among them as announced: each
// counts once in captf_lease_waits_total (when it is one of its reasons).
func (p *pass) emit() {
	for _, i := range p.waitEvents {
		reason := p.events[i].Reason
		p.e.waits.Store(p.obj.GetUID(), reason) // announced
		if r, ok := waitMetricReasons[reason]; ok {
			metrics.LeaseWaits.WithLabelValues(p.role.Kind(), r).Inc()
		}
	}
	for _, ev := range p.events {
		if i := slices.Index(p.emitted, ev); i >= 0 {
			p.emitted = slices.Delete(p.emitted, i, i+1) // the void pass's
			continue
		}
		note := ev.Note
		if len(note) > 512 {
			note = note[:509] + "..."
		}
		p.e.Recorder.Eventf(p.obj, nil, ev.Type, ev.Reason, ev.Reason, "%s", note)
	}
}

// waitMetricReasons names the waits in captf_lease_waits_total.
var waitMetricReasons = map[string]string{
	infrav1.WaitingForRunLeaseReason: "run_lease", infrav1.WaitingForClusterOperationReason: "cluster_operation",
	infrav1.WaitingForMachineOperationsReason: "machine_operations", infrav1.WaitingForJobSlotReason: "job_slot",
}
