package protection

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestProtect(t *testing.T) {
	now := metav1.Now()
	testCases := []struct {
		name        string
		finalizers  []string
		deleting    bool
		wantChanged bool
		want        []string
	}{
		{"a fresh Secret is protected", nil, false, true, []string{Finalizer}},
		{"other finalizers stay", []string{"example.com/keep"}, false, true, []string{"example.com/keep", Finalizer}},
		{"protected once", []string{Finalizer}, false, false, []string{Finalizer}},
		// The API server refuses new finalizers on an object being deleted.
		{"a Secret being deleted is left alone", []string{"example.com/keep"}, true, false, []string{"example.com/keep"}},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Finalizers: tc.finalizers}}
			if tc.deleting {
				s.DeletionTimestamp = &now
			}
			if changed := Protect(s); changed != tc.wantChanged || !slices.Equal(s.Finalizers, tc.want) {
				t.Errorf("Protect: changed %v, finalizers %v; want %v, %v", changed, s.Finalizers, tc.wantChanged, tc.want)
			}
		})
	}
}

func TestUnprotectKeepsOtherFinalizers(t *testing.T) {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Finalizers: []string{"a", Finalizer, "b"}}}
	shared := s.Finalizers
	if !Unprotect(s) || !slices.Equal(s.Finalizers, []string{"a", "b"}) || Protected(s) {
		t.Errorf("after Unprotect: %v", s.Finalizers)
	}
	if !slices.Equal(shared, []string{"a", Finalizer, "b"}) {
		t.Errorf("Unprotect changed the slice it was given: %v", shared)
	}
	if Unprotect(s) {
		t.Error("Unprotect of an unprotected Secret reported a change")
	}
}
