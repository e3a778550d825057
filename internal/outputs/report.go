package outputs

import (
	"slices"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
)

// Problem is one thing the OutputsValid condition reports.
type Problem struct {
	// Reason is an OutputsValid reason: OutputsMissing, OutputsInvalid,
	// FailureDomainMismatch, ProviderIDChanged, OutputsPending or
	// InstancesTruncated.
	Reason string
	// Output is the contract output the problem is about.
	Output string
	// Message says what is wrong and where, never with the output's value.
	Message string
}

// Report is the OutputsValid verdict on a role's outputs.
type Report struct {
	// Problems in the order they were found: by output name, then by place
	// within the output.
	Problems []Problem
}

// precedence orders the OutputsValid reasons, most important first.
var precedence = []string{
	infrav1.OutputsMissingReason,
	infrav1.OutputsInvalidReason,
	infrav1.FailureDomainMismatchReason,
	infrav1.ProviderIDChangedReason,
	infrav1.OutputsPendingReason,
	infrav1.InstancesTruncatedReason,
}

func rank(reason string) int {
	if i := slices.Index(precedence, reason); i >= 0 {
		return i
	}
	return len(precedence)
}

// blocking are the reasons that stop contract fields from being written.
var blocking = []string{
	infrav1.OutputsMissingReason,
	infrav1.OutputsInvalidReason,
	infrav1.FailureDomainMismatchReason,
	infrav1.ProviderIDChangedReason,
}

// maxMessage bounds the condition message; the problems left out are
// counted.
const maxMessage = 2048

func (r *Report) add(reason, output, message string) {
	r.Problems = append(r.Problems, Problem{Reason: reason, Output: output, Message: message})
}

// Has reports whether any problem has the reason.
func (r Report) Has(reason string) bool {
	return slices.ContainsFunc(r.Problems, func(p Problem) bool { return p.Reason == reason })
}

// Valid reports whether the outputs may be written to the contract fields:
// nothing is missing or invalid, the failure domain is the requested one
// and the provider ID did not change. Pending outputs and truncated
// instances leave a Report valid.
func (r Report) Valid() bool {
	return !slices.ContainsFunc(r.Problems, func(p Problem) bool { return slices.Contains(blocking, p.Reason) })
}

// Pending reports whether a required output is not known yet (null).
func (r Report) Pending() bool { return r.Has(infrav1.OutputsPendingReason) }

// IsPending reports whether the named output is not known yet: its field
// in the role value is zero and the previous value should be kept.
func (r Report) IsPending(output string) bool {
	return slices.ContainsFunc(r.Problems, func(p Problem) bool {
		return p.Reason == infrav1.OutputsPendingReason && p.Output == output
	})
}

// Condition returns the OutputsValid condition: the reason of highest
// precedence (OutputsMissing > OutputsInvalid > FailureDomainMismatch >
// ProviderIDChanged > OutputsPending > InstancesTruncated > OutputsValid)
// and every problem's message, most important first, joined by "; ".
// ObservedGeneration and LastTransitionTime are left to the caller.
func (r Report) Condition() metav1.Condition {
	c := metav1.Condition{Type: infrav1.OutputsValidCondition}
	if len(r.Problems) == 0 {
		c.Status = metav1.ConditionTrue
		c.Reason = infrav1.OutputsValidReason
		c.Message = "The module's outputs satisfy the v1alpha1 contract"
		return c
	}
	problems := slices.Clone(r.Problems)
	slices.SortStableFunc(problems, func(a, b Problem) int { return rank(a.Reason) - rank(b.Reason) })
	c.Reason = problems[0].Reason
	switch c.Reason {
	case infrav1.OutputsPendingReason:
		c.Status = metav1.ConditionUnknown
	case infrav1.InstancesTruncatedReason:
		c.Status = metav1.ConditionTrue
	default:
		c.Status = metav1.ConditionFalse
	}
	c.Message = joinMessages(problems)
	return c
}

func joinMessages(problems []Problem) string {
	var b strings.Builder
	for i, p := range problems {
		if i > 0 && b.Len()+len(p.Message)+2 > maxMessage {
			b.WriteString("; and " + strconv.Itoa(len(problems)-i) + " more")
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(p.Message)
	}
	return b.String()
}
