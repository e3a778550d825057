package runs

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestRefused: what only a change makes pass is a refusal naming the Job,
// or its per-run Secret when that was refused; what may pass on a retry
// is not one.
func TestRefused(t *testing.T) {
	jobs := schema.GroupResource{Group: "batch", Resource: "jobs"}
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "captf-run-j", errors.New("exceeded quota"))
	testCases := []struct {
		name    string
		err     error
		refused bool
		says    string
	}{
		{"the Job invalid", apierrors.NewInvalid(schema.GroupKind{Group: "batch", Kind: "Job"}, "j", nil), true, "Job j could not be created"},
		{"the Job forbidden", apierrors.NewForbidden(jobs, "j", errors.New("denied")), true, "Job j could not be created"},
		{"the Job a bad request", apierrors.NewBadRequest("bad"), true, "Job j could not be created"},
		{"the Job too large", apierrors.NewRequestEntityTooLargeError("too large"), true, "Job j could not be created"},
		{"the per-run Secret forbidden", perRunErr(forbidden), true, "Job j cannot run: its per-run Secret captf-run-j was refused"},
		{"a conflict", apierrors.NewConflict(jobs, "j", errors.New("changed")), false, ""},
		{"the server busy", apierrors.NewTooManyRequests("busy", 1), false, ""},
		{"the per-run Secret's server timing out", perRunErr(apierrors.NewServerTimeout(jobs, "create", 1)), false, ""},
		{"not an API error", fmt.Errorf("dial tcp: refused"), false, ""},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			why, refused := Refused(tc.err, "j", "captf-run-j")
			if refused != tc.refused || !strings.HasPrefix(why, tc.says) || (tc.says == "") != (why == "") {
				t.Errorf("Refused = %q, %t; want %t, saying %q", why, refused, tc.refused, tc.says)
			}
		})
	}
}
