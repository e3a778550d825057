package webhooks

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	infrav1 "captf.io/captf/api/v1alpha1"
)

func TestSecurityContextRules(t *testing.T) {
	testCases := []struct {
		name string
		jobs infrav1.JobsSpec
		want []string // fields refused; none = admitted
	}{
		{"defaults", infrav1.JobsSpec{}, nil},
		{"a non-root user and tighter settings", infrav1.JobsSpec{
			SecurityContext:    &corev1.SecurityContext{RunAsUser: ptr.To[int64](1000), RunAsNonRoot: ptr.To(true), ReadOnlyRootFilesystem: ptr.To(true)},
			PodSecurityContext: &corev1.PodSecurityContext{FSGroup: ptr.To[int64](2000), Sysctls: []corev1.Sysctl{{Name: "net.ipv4.tcp_syncookies", Value: "1"}}},
		}, nil},
		{"every weakening of the container", infrav1.JobsSpec{SecurityContext: &corev1.SecurityContext{
			Privileged: ptr.To(true), AllowPrivilegeEscalation: ptr.To(true),
			Capabilities:           &corev1.Capabilities{Add: []corev1.Capability{"NET_ADMIN"}},
			ReadOnlyRootFilesystem: ptr.To(false), ProcMount: ptr.To(corev1.UnmaskedProcMount),
			SeccompProfile:  &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined},
			AppArmorProfile: &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeUnconfined},
			SELinuxOptions:  &corev1.SELinuxOptions{Type: "spc_t", User: "system_u", Role: "system_r"},
			WindowsOptions:  &corev1.WindowsSecurityContextOptions{HostProcess: ptr.To(true)},
			RunAsUser:       ptr.To[int64](0), RunAsNonRoot: ptr.To(false),
		}}, prefixed("securityContext.", "privileged", "allowPrivilegeEscalation", "capabilities.add", "readOnlyRootFilesystem", "procMount",
			"seccompProfile.type", "appArmorProfile.type", "seLinuxOptions.type", "seLinuxOptions.user", "seLinuxOptions.role",
			"windowsOptions.hostProcess", "runAsUser", "runAsNonRoot")},
		{"pod: root and an unsafe sysctl", infrav1.JobsSpec{PodSecurityContext: &corev1.PodSecurityContext{
			RunAsUser: ptr.To[int64](0), Sysctls: []corev1.Sysctl{{Name: "kernel.msgmax", Value: "1"}},
		}}, []string{"podSecurityContext.runAsUser", "podSecurityContext.sysctls[0].name"}},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			errs := validateJobs(&tc.jobs, field.NewPath("spec", "jobs"))
			if len(errs) != len(tc.want) {
				t.Fatalf("%d errors, want %d: %v", len(errs), len(tc.want), errs)
			}
			msg := errs.ToAggregate()
			for _, w := range tc.want {
				if msg == nil || !strings.Contains(msg.Error(), "spec.jobs."+w) {
					t.Errorf("no error names spec.jobs.%s: %v", w, msg)
				}
			}
		})
	}
}

func prefixed(prefix string, names ...string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = prefix + n
	}
	return out
}
