package localnode

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// The container's user and groups come from the pod's security context,
// the container's winning; fsGroup and supplementalGroups are groups.
func TestEffectiveSecurity(t *testing.T) {
	pod := &corev1.Pod{Spec: corev1.PodSpec{SecurityContext: &corev1.PodSecurityContext{
		RunAsUser: ptr.To[int64](1000), RunAsGroup: ptr.To[int64](1000), FSGroup: ptr.To[int64](65532),
		SupplementalGroups: []int64{5}, RunAsNonRoot: ptr.To(true),
	}}}
	c := &corev1.Container{SecurityContext: &corev1.SecurityContext{RunAsUser: ptr.To[int64](65532), ReadOnlyRootFilesystem: ptr.To(true)}}
	got := effectiveSecurity(pod, c)
	if got.uid != 65532 || got.gid != 1000 || !got.nonRoot || !got.readOnlyRootFS || len(got.groups) != 2 || got.groups[1] != 65532 {
		t.Errorf("effectiveSecurity = %+v", got)
	}
	if root := effectiveSecurity(&corev1.Pod{}, &corev1.Container{}); root.uid != 0 || root.nonRoot {
		t.Errorf("no security context: %+v, want root", root)
	}
}
