package jobs

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	infrav1 "captf.io/captf/api/v1alpha1"
)

// The effective policy refuses what admission refuses, naming each field
// where the user wrote it; Build refuses it too, for every operation.
func TestValidateSecurity(t *testing.T) {
	testCases := []struct {
		name                   string
		own, defaults, cluster *infrav1.JobsSpec
		want                   []string
	}{
		{"the built-in defaults", nil, nil, nil, nil},
		{"a harmless own context", &infrav1.JobsSpec{SecurityContext: &corev1.SecurityContext{RunAsUser: ptr.To[int64](1000)}}, nil, nil, nil},
		{"privileged in the object's spec.jobs", &infrav1.JobsSpec{SecurityContext: &corev1.SecurityContext{Privileged: ptr.To(true)}}, nil, nil,
			[]string{"spec.jobs.securityContext.privileged: weakens the Job's isolation"}},
		{"root in the cluster's defaults", nil, &infrav1.JobsSpec{PodSecurityContext: &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](0)}}, nil,
			[]string{"the TerraformCluster's spec.defaults.jobs.podSecurityContext.runAsUser: asks for root explicitly"}},
		{"two fields at two levels", &infrav1.JobsSpec{SecurityContext: &corev1.SecurityContext{ReadOnlyRootFilesystem: ptr.To(false)}}, nil,
			&infrav1.JobsSpec{PodSecurityContext: &corev1.PodSecurityContext{Sysctls: []corev1.Sysctl{{Name: "kernel.msgmax", Value: "1"}}}},
			[]string{"spec.jobs.securityContext.readOnlyRootFilesystem:", "the TerraformCluster's spec.jobs.podSecurityContext.sysctls[0].name: only the Pod Security Standards' safe sysctls"}},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			p := MergePolicy(tc.own, tc.defaults, tc.cluster)
			err := p.ValidateSecurity()
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("ValidateSecurity: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("ValidateSecurity accepted the policy; want %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("ValidateSecurity: %q does not say %q", err, w)
				}
			}
			for _, op := range []infrav1.Operation{infrav1.OperationApply, infrav1.OperationDestroy, infrav1.OperationRestore} {
				s := newSpec("TerraformCluster", "demo", op, 1, tc.own, "")
				s.Policy = p
				if op == infrav1.OperationRestore {
					s.Restore = &Restore{Chunks: []string{"b-0"}, Resources: 1}
				}
				if _, _, err := Build(s); err == nil || !strings.Contains(err.Error(), tc.want[0]) {
					t.Errorf("Build of a %s: %v; want a refusal naming %q", op, err, tc.want[0])
				}
			}
		})
	}
}
