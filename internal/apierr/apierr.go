// Package apierr says what went wrong with an API request in words that
// may reach conditions and events.
package apierr

import (
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Reason names an API error by its reason, never by a message that could
// carry request content.
func Reason(err error) string {
	if r := apierrors.ReasonForError(err); r != metav1.StatusReasonUnknown {
		return string(r)
	}
	return "request failed"
}
