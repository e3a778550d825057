package conditions

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
)

// TestDriftChecked: what a drift Job's finding reports, by action.
func TestDriftChecked(t *testing.T) {
	many := []string{"a.one", "a.two", "a.three", "a.four", "a.five", "a.six"}
	testCases := []struct {
		name    string
		f       DriftFinding
		status  metav1.ConditionStatus
		reason  string
		says    []string
		notSays string
	}{
		{"no drift", DriftFinding{Job: "captf-c-demo-drift-x"}, metav1.ConditionFalse, infrav1.NoDriftReason, []string{"captf-c-demo-drift-x found no drift"}, ""},
		{"drift reported", DriftFinding{Job: "j", Detected: true, Update: 1, Resources: []string{"a.one"}}, metav1.ConditionTrue, infrav1.DriftReportedReason,
			[]string{"1 to update", "(a.one)", "drift.action is Report"}, "and more"},
		{"drift to remediate", DriftFinding{Job: "j", Detected: true, Delete: 2, Remediates: true}, metav1.ConditionTrue, infrav1.DriftPendingReason,
			[]string{"2 to delete", "remediation apply of the current inputs is due"}, "("},
		{"five addresses at most", DriftFinding{Job: "j", Detected: true, Replace: 6, Resources: many}, metav1.ConditionTrue, infrav1.DriftReportedReason,
			[]string{"a.five, and more)"}, "a.six"},
		{"a truncated list says so", DriftFinding{Job: "j", Detected: true, Create: 9, Resources: many[:2], Truncated: true}, metav1.ConditionTrue, infrav1.DriftReportedReason,
			[]string{"(a.one, a.two, and more)"}, ""},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			c := DriftChecked(tc.f)
			if c.Type != infrav1.DriftDetectedCondition || c.Status != tc.status || c.Reason != tc.reason {
				t.Fatalf("DriftDetected = %+v, want %s/%s", c, tc.status, tc.reason)
			}
			wantSays(t, c.Message, tc.says, tc.notSays)
		})
	}
}

// TestDriftAfterApply: an apply that ends while a finding stands.
func TestDriftAfterApply(t *testing.T) {
	testCases := []struct {
		name   string
		a      ApplyAfterDrift
		status metav1.ConditionStatus // "" when the finding is left as it is
		reason string
		says   string
	}{
		{"any successful apply clears it", ApplyAfterDrift{Job: "j", Succeeded: true}, metav1.ConditionFalse, infrav1.NoDriftReason, "applied the current inputs"},
		{"a failed apply that was no remediation leaves it", ApplyAfterDrift{Job: "j", Limit: 3}, "", "", ""},
		{"a blocked remediation waits for approval", ApplyAfterDrift{Job: "j", Remediation: true, Blocked: true, Limit: 3, Failures: 3},
			metav1.ConditionTrue, infrav1.DriftPendingReason, "approve its TerraformPlan"},
		{"a failed remediation is retried", ApplyAfterDrift{Job: "j", Remediation: true, Limit: 3, Failures: 2},
			metav1.ConditionTrue, infrav1.DriftPendingReason, "retried until 3 have failed"},
		{"the cap is reached", ApplyAfterDrift{Job: "j", Remediation: true, Limit: 3, Failures: 3},
			metav1.ConditionTrue, infrav1.DriftPendingReason, "the 3rd failed since the drift check: the remediation cap is reached"},
		{"the cap of one", ApplyAfterDrift{Job: "j", Remediation: true, Limit: 1, Failures: 1},
			metav1.ConditionTrue, infrav1.DriftPendingReason, "the 1st failed"},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			c, ok := DriftAfterApply(tc.a)
			if tc.status == "" {
				if ok {
					t.Fatalf("DriftDetected = %+v, want it left as it is", c)
				}
				return
			}
			if !ok || c.Status != tc.status || c.Reason != tc.reason || !strings.Contains(c.Message, tc.says) {
				t.Fatalf("DriftDetected = %+v (set %v), want %s/%s saying %q", c, ok, tc.status, tc.reason, tc.says)
			}
		})
	}
}

// TestDriftBackingOff keeps the finding's first sentence and says until
// when the remediation waits.
func TestDriftBackingOff(t *testing.T) {
	found := DriftChecked(DriftFinding{Job: "j", Detected: true, Update: 1, Remediates: true})
	until := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	c := DriftBackingOff(found, until)
	if c.Reason != infrav1.DriftPendingReason || !strings.HasPrefix(c.Message, "The last drift check found drift: 0 to create, 1 to update") ||
		!strings.HasSuffix(c.Message, "until 2026-12-04T10:00:00Z") || strings.Contains(c.Message, "is due") {
		t.Errorf("DriftDetected = %+v", c)
	}
	if again := DriftBackingOff(c, until.Add(time.Minute)); !strings.HasSuffix(again.Message, "until 2026-12-04T10:01:00Z") || strings.Count(again.Message, "waits out") != 1 {
		t.Errorf("backing off again: %q", again.Message)
	}
	if r := DriftRemediating("captf-c-demo-apply-x"); r.Reason != infrav1.DriftRemediatingReason || !strings.Contains(r.Message, "captf-c-demo-apply-x") {
		t.Errorf("DriftRemediating = %+v", r)
	}
}

func TestOrdinal(t *testing.T) {
	for n, want := range map[int]string{1: "1st", 2: "2nd", 3: "3rd", 4: "4th", 11: "11th", 12: "12th", 13: "13th", 21: "21st", 22: "22nd", 101: "101st", 111: "111th"} {
		if got := ordinal(n); got != want {
			t.Errorf("ordinal(%d) = %s, want %s", n, got, want)
		}
	}
}

// TestDriftFollowsAction: a standing finding says what the object's drift
// action does about it now, not what it did when the finding was made: a
// remediation due once the action is Remediate again (or, the cap
// reached, that none runs), nothing changed once it is Report. What was
// found is kept word for word, addresses included.
func TestDriftFollowsAction(t *testing.T) {
	finding := DriftFinding{Job: "j", Detected: true, Update: 1, Resources: []string{`a.x["b; c"]`, "a.y"}}
	reported := DriftChecked(finding)
	finding.Remediates = true
	pending := DriftChecked(finding)
	found := strings.TrimSuffix(pending.Message, remediationDue)
	backingOff := DriftBackingOff(pending, time.Date(2026, 12, 5, 2, 0, 0, 0, time.UTC))
	failed, _ := DriftAfterApply(ApplyAfterDrift{Job: "r1", Remediation: true, Limit: 3, Failures: 1})
	capped, _ := DriftAfterApply(ApplyAfterDrift{Job: "r3", Remediation: true, Limit: 3, Failures: 3})
	cappedText := findingOf(capped.Message)
	cappedReported, _ := DriftFollowsAction(capped, false, true)
	// An address may hold an ending's words: the last ending counts.
	odd := DriftChecked(DriftFinding{Job: "j", Detected: true, Update: 1, Resources: []string{`a.x["` + reportOnly + `"]`}})
	for _, tc := range []struct {
		name                 string
		current              metav1.Condition
		remediates, isCapped bool
		reason               string // "" : it stays
		says                 string
	}{
		{"remediation due, action now Report", pending, false, false, infrav1.DriftReportedReason, found + reportOnly},
		{"backing off, action now Report", backingOff, false, false, infrav1.DriftReportedReason, found + reportOnly},
		{"reported, action now Remediate", reported, true, false, infrav1.DriftPendingReason, found + remediationDue},
		{"reported, action now Remediate, the cap reached", reported, true, true, infrav1.DriftPendingReason, found + remediationCap},
		{"a failed remediation, action now Report", failed, false, false, infrav1.DriftReportedReason, "The remediation apply Job r1 did not succeed" + reportOnly},
		{"the cap reached, Report and back: the cap again", cappedReported, true, true, infrav1.DriftPendingReason, cappedText},
		{"an address holding an ending's words", odd, true, false, infrav1.DriftPendingReason, strings.TrimSuffix(odd.Message, reportOnly) + remediationDue},
		{"remediation due, still Remediate", pending, true, false, "", ""},
		{"the cap reached, still Remediate", capped, true, true, "", ""},
		{"reported, still Report", reported, false, false, "", ""},
		{"a remediation runs", DriftRemediating("r2"), false, false, "", ""},
		{"no drift", DriftChecked(DriftFinding{Job: "j"}), true, false, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, ok := DriftFollowsAction(tc.current, tc.remediates, tc.isCapped)
			switch {
			case tc.reason == "" && ok:
				t.Errorf("DriftFollowsAction = %+v, want the finding to stay", c)
			case tc.reason != "" && (!ok || c.Reason != tc.reason || c.Message != tc.says || c.Status != metav1.ConditionTrue):
				t.Errorf("DriftFollowsAction = %+v (%v), want True %s %q", c, ok, tc.reason, tc.says)
			}
		})
	}
}
