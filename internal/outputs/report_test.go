package outputs_test

import (
	"strconv"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/outputs"
)

// ranked are the OutputsValid reasons in the documented precedence, with
// the status each gives.
var ranked = []struct {
	reason string
	status metav1.ConditionStatus
	valid  bool
}{
	{infrav1.OutputsMissingReason, metav1.ConditionFalse, false},
	{infrav1.OutputsInvalidReason, metav1.ConditionFalse, false},
	{infrav1.FailureDomainMismatchReason, metav1.ConditionFalse, false},
	{infrav1.ProviderIDChangedReason, metav1.ConditionFalse, false},
	{infrav1.OutputsPendingReason, metav1.ConditionUnknown, true},
	{infrav1.InstancesTruncatedReason, metav1.ConditionTrue, true},
}

// TestReportPrecedence: each reason against every reason below it, in
// either order of discovery.
func TestReportPrecedence(t *testing.T) {
	for i, hi := range ranked {
		t.Run(hi.reason+"/alone", func(t *testing.T) {
			r := outputs.Report{Problems: []outputs.Problem{{Reason: hi.reason, Output: "x", Message: "only"}}}
			wantCondition(t, r.Condition(), hi.status, hi.reason, "only")
			if r.Valid() != hi.valid || r.Pending() != (hi.reason == infrav1.OutputsPendingReason) {
				t.Errorf("Valid() = %v, Pending() = %v", r.Valid(), r.Pending())
			}
		})
		for _, lo := range ranked[i+1:] {
			t.Run(hi.reason+"/over/"+lo.reason, func(t *testing.T) {
				r := outputs.Report{Problems: []outputs.Problem{
					{Reason: lo.reason, Output: "b", Message: "lower"},
					{Reason: hi.reason, Output: "a", Message: "higher"},
				}}
				c := r.Condition()
				wantCondition(t, c, hi.status, hi.reason)
				if c.Message != "higher; lower" {
					t.Errorf("message %q, want the higher problem first", c.Message)
				}
				if r.Valid() != (hi.valid && lo.valid) {
					t.Errorf("Valid() = %v", r.Valid())
				}
			})
		}
	}
}

func TestReportNoProblems(t *testing.T) {
	var r outputs.Report
	wantCondition(t, r.Condition(), metav1.ConditionTrue, infrav1.OutputsValidReason, "satisfy")
	if r.Condition().Type != infrav1.OutputsValidCondition || !r.Valid() || r.Pending() || r.IsPending("health") {
		t.Errorf("empty report: %+v", r.Condition())
	}
}

func TestReportMessageIsBounded(t *testing.T) {
	var r outputs.Report
	for i := range 5000 {
		r.Problems = append(r.Problems, outputs.Problem{
			Reason: infrav1.OutputsInvalidReason, Output: "provider_id_list",
			Message: "provider_id_list/" + strconv.Itoa(i) + ": maxLength: got 600, want 512",
		})
	}
	c := r.Condition()
	if len(c.Message) > 2100 || !strings.HasSuffix(c.Message, " more") || !strings.HasPrefix(c.Message, "provider_id_list/0: ") {
		t.Errorf("message of %d bytes: ...%s", len(c.Message), c.Message[len(c.Message)-40:])
	}
}

// TestManyViolations: a list of 10,000 bad members is judged in
// one pass, and the message stays bounded.
func TestManyViolations(t *testing.T) {
	_, r := outputs.ReadPool(outs(poolBase, map[string]string{"provider_id_list": repeat(`""`, 10000)}))
	c := r.Condition()
	wantCondition(t, c, metav1.ConditionFalse, infrav1.OutputsInvalidReason, "provider_id_list/0: minLength", " more")
	if len(c.Message) > 2100 {
		t.Errorf("message of %d bytes", len(c.Message))
	}
}
