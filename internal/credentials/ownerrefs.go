package credentials

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	infrav1 "captf.io/captf/api/v1alpha1"
)

// sameObject reports whether two owner references name the same object
// apart from its UID: same API group, kind and name.
func sameObject(a, b metav1.OwnerReference) bool {
	return a.Kind == b.Kind && a.Name == b.Name && groupOf(a.APIVersion) == groupOf(b.APIVersion)
}

func groupOf(apiVersion string) string {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return apiVersion
	}
	return gv.Group
}

// withOwnerRef returns refs holding exactly one reference to ref's object,
// equal to ref (a non-controller reference without blockOwnerDeletion), in
// the place of the first earlier reference to it, and whether that changed
// anything. A reference to an earlier UID of the object is replaced.
func withOwnerRef(refs []metav1.OwnerReference, ref metav1.OwnerReference) ([]metav1.OwnerReference, bool) {
	out := make([]metav1.OwnerReference, 0, len(refs)+1)
	placed, changed := false, false
	for _, r := range refs {
		if !sameObject(r, ref) {
			out = append(out, r)
			continue
		}
		if placed {
			changed = true
			continue
		}
		placed = true
		if !equalRef(r, ref) {
			changed = true
		}
		out = append(out, ref)
	}
	if !placed {
		out = append(out, ref)
		changed = true
	}
	return out, changed
}

// withoutOwnerRef returns refs without any reference to ref's object
// (whatever its UID), and whether one was removed.
func withoutOwnerRef(refs []metav1.OwnerReference, ref metav1.OwnerReference) ([]metav1.OwnerReference, bool) {
	out := make([]metav1.OwnerReference, 0, len(refs))
	for _, r := range refs {
		if !sameObject(r, ref) {
			out = append(out, r)
		}
	}
	return out, len(out) != len(refs)
}

func equalRef(a, b metav1.OwnerReference) bool {
	return a.APIVersion == b.APIVersion && a.Kind == b.Kind && a.Name == b.Name && a.UID == b.UID &&
		a.Controller == nil && b.Controller == nil && a.BlockOwnerDeletion == nil && b.BlockOwnerDeletion == nil
}

// mirrorOf says whether an object's metadata marks it as the mirror of the
// named identity, and if not, why not.
func mirrorOf(obj metav1.Object, identity string) (bool, string) {
	if obj.GetLabels()[infrav1.MirroredLabel] != "true" {
		return false, fmt.Sprintf("it lacks the label %s=true", infrav1.MirroredLabel)
	}
	if got := obj.GetAnnotations()[infrav1.IdentityAnnotation]; got != identity {
		return false, fmt.Sprintf("its annotation %s names identity %q", infrav1.IdentityAnnotation, got)
	}
	return true, ""
}
