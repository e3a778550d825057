package conditions

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
)

// TestStatus: the one place a pass's conditions are computed. Each row is
// a pass: what the object carried, what the pass reported, and what each
// condition type must say after it.
func TestStatus(t *testing.T) {
	then, now := metav1.NewTime(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)), metav1.NewTime(time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC))
	c := func(t, status, reason string) metav1.Condition {
		return metav1.Condition{Type: t, Status: metav1.ConditionStatus(status), Reason: reason, Message: reason, LastTransitionTime: then}
	}
	fromState := c(infrav1.ApplyJobSucceededCondition, "True", infrav1.ApplySucceededReason)
	fromState.LastTransitionTime = metav1.Time{}
	healthy := c(infrav1.InfrastructureHealthyCondition, "True", "Running")
	applied := c(infrav1.ApplyJobSucceededCondition, "True", infrav1.ApplySucceededReason)
	failed := c(infrav1.ApplyJobSucceededCondition, "False", infrav1.ApplyFailedReason)
	identity := c(infrav1.IdentityAllowedCondition, "False", infrav1.IdentityNotFoundReason)
	// A pass reports without a transition time: Status stamps it.
	report := func(x metav1.Condition) metav1.Condition { x.LastTransitionTime = metav1.Time{}; return x }
	for _, tc := range []struct {
		name        string
		in          Pass
		want        map[string]string // type: "Status/Reason"
		transitions map[string]metav1.Time
	}{
		{
			name: "a first pass: first-visit values, no apply yet, Ready waits",
			in:   Pass{FromState: NoApplyYet},
			want: map[string]string{
				infrav1.ApplyJobSucceededCondition: "Unknown/" + infrav1.NoApplyYetReason, infrav1.InfrastructureHealthyCondition: "Unknown/" + infrav1.WaitingForProvisioningReason,
				infrav1.DriftDetectedCondition: "Unknown/" + infrav1.DriftNotCheckedReason, infrav1.OutputsValidCondition: "Unknown/" + infrav1.OutputsPendingReason,
				infrav1.DeletionBlockedCondition: "", infrav1.ReadyCondition: "Unknown/" + infrav1.ReadyUnknownReason,
			},
			transitions: map[string]metav1.Time{infrav1.ApplyJobSucceededCondition: now, infrav1.ReadyCondition: now},
		},
		{
			name: "a kind with dependents starts NotBlocked",
			in:   Pass{FromState: NoApplyYet, Dependents: true},
			want: map[string]string{infrav1.DeletionBlockedCondition: "False/" + infrav1.NotBlockedReason},
		},
		{
			name: "a report replaces; what the pass did not report keeps its value and its transition",
			in:   Pass{Previous: []metav1.Condition{applied, healthy, identity}, Reported: []metav1.Condition{report(failed)}, FromState: fromState},
			want: map[string]string{
				infrav1.ApplyJobSucceededCondition: "False/" + infrav1.ApplyFailedReason, infrav1.InfrastructureHealthyCondition: "True/Running",
				infrav1.IdentityAllowedCondition: "False/" + infrav1.IdentityNotFoundReason,
			},
			transitions: map[string]metav1.Time{infrav1.ApplyJobSucceededCondition: now, infrav1.InfrastructureHealthyCondition: then, infrav1.IdentityAllowedCondition: then},
		},
		{
			name: "no Job reported an apply: the state vouches for it",
			in:   Pass{Previous: []metav1.Condition{c(infrav1.ApplyJobSucceededCondition, "Unknown", infrav1.NoApplyYetReason)}, FromState: fromState},
			want: map[string]string{infrav1.ApplyJobSucceededCondition: "True/" + infrav1.ApplySucceededReason},
		},
		{
			name: "a Job's result is not overridden by the state",
			in:   Pass{Previous: []metav1.Condition{failed}, FromState: fromState},
			want: map[string]string{infrav1.ApplyJobSucceededCondition: "False/" + infrav1.ApplyFailedReason},
		},
		{
			name: "a Job reported this pass: the state does not override it",
			in:   Pass{Previous: []metav1.Condition{c(infrav1.ApplyJobSucceededCondition, "Unknown", infrav1.NoApplyYetReason)}, Reported: []metav1.Condition{report(failed)}, FromState: fromState},
			want: map[string]string{infrav1.ApplyJobSucceededCondition: "False/" + infrav1.ApplyFailedReason},
		},
		{
			name: "a dropped type goes, unless reported",
			in: Pass{Previous: []metav1.Condition{applied, c(infrav1.RestoreJobSucceededCondition, "Unknown", infrav1.WaitingForJobSlotReason), identity},
				Reported: []metav1.Condition{report(identity)}, Dropped: []string{infrav1.RestoreJobSucceededCondition, infrav1.IdentityAllowedCondition}},
			want: map[string]string{infrav1.RestoreJobSucceededCondition: "", infrav1.IdentityAllowedCondition: "False/" + infrav1.IdentityNotFoundReason,
				infrav1.ApplyJobSucceededCondition: "True/" + infrav1.ApplySucceededReason},
		},
		{
			name: "a fact whose step ran and did not say it goes; one whose step did not run stays",
			in: Pass{Previous: []metav1.Condition{identity, healthy, c(infrav1.StateReadableCondition, "True", infrav1.StateReadReason)},
				Ran: []Step{StepCredentials, StepLifecycle}},
			want: map[string]string{infrav1.IdentityAllowedCondition: "", infrav1.InfrastructureHealthyCondition: "True/Running",
				infrav1.StateReadableCondition: "True/" + infrav1.StateReadReason},
		},
		{
			name:        "a step that ran and said its fact: the fact, its transition kept when unchanged",
			in:          Pass{Previous: []metav1.Condition{identity}, Reported: []metav1.Condition{report(identity)}, Ran: []Step{StepCredentials}},
			want:        map[string]string{infrav1.IdentityAllowedCondition: "False/" + infrav1.IdentityNotFoundReason},
			transitions: map[string]metav1.Time{infrav1.IdentityAllowedCondition: then},
		},
		{
			name: "records stay whatever ran; a type not a workload's stays",
			in: Pass{Previous: []metav1.Condition{failed, c(infrav1.InputsAppliedCondition, "False", "InputsNotApplied"), c("ExampleDotComReady", "True", "Fine")},
				Ran: []Step{StepLifecycle, StepInputs, StepCredentials, StepRunnerRBAC, StepState, StepOutputs, StepDependents, StepOwnerSync}},
			want: map[string]string{infrav1.ApplyJobSucceededCondition: "False/" + infrav1.ApplyFailedReason, infrav1.InputsAppliedCondition: "False/InputsNotApplied",
				"ExampleDotComReady": "True/Fine"},
		},
		{
			name: "a first-visit value of a step that ran unsaid goes too",
			in:   Pass{FromState: NoApplyYet, Ran: []Step{StepOutputs}},
			want: map[string]string{infrav1.OutputsValidCondition: "", infrav1.InfrastructureHealthyCondition: "",
				infrav1.DriftDetectedCondition: "Unknown/" + infrav1.DriftNotCheckedReason},
		},
		{
			name: "a provisioned object's Ready follows its health, not its applies",
			in:   Pass{Previous: []metav1.Condition{failed, healthy}, Provisioned: true},
			want: map[string]string{infrav1.ReadyCondition: "True/" + infrav1.ReadyReason},
		},
		{
			name: "a pool's Ready follows its applies too",
			in:   Pass{Previous: []metav1.Condition{failed, healthy}, Provisioned: true, ReadyFollowsApplies: true},
			want: map[string]string{infrav1.ReadyCondition: "False/" + infrav1.NotReadyReason},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.in.Generation, tc.in.Now = 7, now
			before := append([]metav1.Condition(nil), tc.in.Previous...)
			got := Status(tc.in)
			for typ, want := range tc.want {
				g := meta.FindStatusCondition(got, typ)
				switch {
				case want == "" && g != nil:
					t.Errorf("%s = %s/%s, want none", typ, g.Status, g.Reason)
				case want != "" && (g == nil || string(g.Status)+"/"+g.Reason != want):
					t.Errorf("%s = %+v, want %s", typ, g, want)
				}
			}
			for typ, at := range tc.transitions {
				if g := meta.FindStatusCondition(got, typ); g == nil || !g.LastTransitionTime.Equal(&at) {
					t.Errorf("%s changed at %v, want %v", typ, g, at)
				}
			}
			for _, g := range got {
				if g.ObservedGeneration != 7 {
					t.Errorf("%s observed generation %d, want 7", g.Type, g.ObservedGeneration)
				}
			}
			if len(before) != len(tc.in.Previous) || (len(before) > 0 && before[0] != tc.in.Previous[0]) {
				t.Error("Status changed the conditions it was given")
			}
		})
	}
}
