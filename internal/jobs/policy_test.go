package jobs

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	infrav1 "captf.io/captf/api/v1alpha1"
)

func TestMergePolicyDefaults(t *testing.T) {
	for _, tc := range []struct {
		name string
		own  *infrav1.JobsSpec
	}{{name: "nil"}, {name: "empty", own: &infrav1.JobsSpec{}}} {
		t.Run(tc.name, func(t *testing.T) {
			p := MergePolicy(tc.own, nil, nil)
			want := Policy{
				SuccessfulJobsHistoryLimit: 3,
				FailedJobsHistoryLimit:     3,
				ActiveDeadlineSeconds:      3600,
				LockTimeoutSeconds:         300,
				ServiceAccountName:         "captf-runner",
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("512Mi")},
					Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("2Gi")},
				},
				SecurityContext: &corev1.SecurityContext{
					Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
					ReadOnlyRootFilesystem:   ptr.To(true),
					AllowPrivilegeEscalation: ptr.To(false),
					SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
				},
				PodSecurityContext: &corev1.PodSecurityContext{
					FSGroup:        ptr.To[int64](65532),
					SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
				},
				ActiveDeadlineFrom:  FromDefault,
				LockTimeoutFrom:     FromDefault,
				SecurityContextFrom: FromDefault, PodSecurityContextFrom: FromDefault,
			}
			if !equality.Semantic.DeepEqual(p, want) {
				t.Fatalf("policy:\n got %+v\nwant %+v", p, want)
			}
			if err := p.Validate(); err != nil {
				t.Fatalf("the built-in policy is invalid: %v", err)
			}
		})
	}
}

func TestMergePolicy(t *testing.T) {
	env := func(pairs ...string) []corev1.EnvVar {
		var out []corev1.EnvVar
		for i := 0; i < len(pairs); i += 2 {
			out = append(out, corev1.EnvVar{Name: pairs[i], Value: pairs[i+1]})
		}
		return out
	}
	refs := func(names ...string) []corev1.LocalObjectReference {
		var out []corev1.LocalObjectReference
		for _, n := range names {
			out = append(out, corev1.LocalObjectReference{Name: n})
		}
		return out
	}
	small := &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}
	big := &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("8Gi")}}

	testCases := []struct {
		name                      string
		own, defaults, clusterOwn *infrav1.JobsSpec
		check                     func(t *testing.T, p Policy)
	}{
		{
			name:     "object field wins over cluster defaults and cluster own",
			own:      &infrav1.JobsSpec{ActiveDeadlineSeconds: ptr.To[int64](100)},
			defaults: &infrav1.JobsSpec{ActiveDeadlineSeconds: ptr.To[int64](200), LockTimeoutSeconds: ptr.To[int32](20)},
			clusterOwn: &infrav1.JobsSpec{ActiveDeadlineSeconds: ptr.To[int64](300), LockTimeoutSeconds: ptr.To[int32](30),
				SuccessfulJobsHistoryLimit: ptr.To[int32](7)},
			check: func(t *testing.T, p Policy) {
				expect(t, "deadline", p.ActiveDeadlineSeconds, int64(100))
				expect(t, "deadline origin", p.ActiveDeadlineFrom, FromObject)
				expect(t, "lock", p.LockTimeoutSeconds, int32(20))
				expect(t, "lock origin", p.LockTimeoutFrom, FromClusterDefaults)
				expect(t, "successful history", p.SuccessfulJobsHistoryLimit, int32(7))
				expect(t, "failed history", p.FailedJobsHistoryLimit, int32(3))
			},
		},
		{
			name:       "cluster own spec.jobs applies when defaults leave a field unset",
			defaults:   &infrav1.JobsSpec{FailedJobsHistoryLimit: ptr.To[int32](0)},
			clusterOwn: &infrav1.JobsSpec{ServiceAccountName: "tenant-runner", FailedJobsHistoryLimit: ptr.To[int32](9)},
			check: func(t *testing.T, p Policy) {
				expect(t, "service account", p.ServiceAccountName, "tenant-runner")
				expect(t, "failed history (0 is a value, not unset)", p.FailedJobsHistoryLimit, int32(0))
			},
		},
		{
			name:       "env merged by name, object first and winning",
			own:        &infrav1.JobsSpec{Env: env("B", "own", "A", "own")},
			defaults:   &infrav1.JobsSpec{Env: env("A", "defaults", "C", "defaults")},
			clusterOwn: &infrav1.JobsSpec{Env: env("C", "cluster", "D", "cluster")},
			check: func(t *testing.T, p Policy) {
				expect(t, "env", p.Env, env("B", "own", "A", "own", "C", "defaults", "D", "cluster"))
			},
		},
		{
			name:       "imagePullSecrets union, object first, without duplicates",
			own:        &infrav1.JobsSpec{ImagePullSecrets: refs("b", "a")},
			defaults:   &infrav1.JobsSpec{ImagePullSecrets: refs("a", "c")},
			clusterOwn: &infrav1.JobsSpec{ImagePullSecrets: refs("c", "d")},
			check: func(t *testing.T, p Policy) {
				expect(t, "imagePullSecrets", p.ImagePullSecrets, refs("b", "a", "c", "d"))
			},
		},
		{
			name:       "resources replaced whole by the first level that sets them",
			defaults:   &infrav1.JobsSpec{Resources: small},
			clusterOwn: &infrav1.JobsSpec{Resources: big},
			check: func(t *testing.T, p Policy) {
				expect(t, "resources", p.Resources, *small)
			},
		},
		{
			name: "security context replaced whole across levels, then laid over the built-in",
			own:  &infrav1.JobsSpec{SecurityContext: &corev1.SecurityContext{RunAsUser: ptr.To[int64](1000)}},
			defaults: &infrav1.JobsSpec{SecurityContext: &corev1.SecurityContext{
				RunAsGroup: ptr.To[int64](2000), ReadOnlyRootFilesystem: ptr.To(true)}},
			check: func(t *testing.T, p Policy) {
				want := &corev1.SecurityContext{
					RunAsUser:                ptr.To[int64](1000),
					Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
					ReadOnlyRootFilesystem:   ptr.To(true),
					AllowPrivilegeEscalation: ptr.To(false),
					SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
				}
				expect(t, "securityContext", p.SecurityContext, want)
			},
		},
		{
			name: "capabilities are always exactly drop ALL",
			own: &infrav1.JobsSpec{SecurityContext: &corev1.SecurityContext{
				Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"NET_RAW"}, Add: []corev1.Capability{"NET_ADMIN"}}}},
			check: func(t *testing.T, p Policy) {
				expect(t, "capabilities", p.SecurityContext.Capabilities, &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}})
			},
		},
		{
			name: "capabilities drop ALL even when the user's context names none",
			own:  &infrav1.JobsSpec{SecurityContext: &corev1.SecurityContext{Capabilities: &corev1.Capabilities{}}},
			check: func(t *testing.T, p Policy) {
				expect(t, "capabilities", p.SecurityContext.Capabilities, &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}})
			},
		},
		{
			name:       "pod security context replaced whole, then laid over the built-in",
			own:        &infrav1.JobsSpec{PodSecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true)}},
			clusterOwn: &infrav1.JobsSpec{PodSecurityContext: &corev1.PodSecurityContext{FSGroup: ptr.To[int64](1)}},
			check: func(t *testing.T, p Policy) {
				expect(t, "podSecurityContext", p.PodSecurityContext, &corev1.PodSecurityContext{
					RunAsNonRoot:   ptr.To(true),
					FSGroup:        ptr.To[int64](65532),
					SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
				})
			},
		},
		{
			name: "the user's seccomp profile and fsGroup are kept",
			own: &infrav1.JobsSpec{PodSecurityContext: &corev1.PodSecurityContext{
				FSGroup: ptr.To[int64](1000), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeLocalhost, LocalhostProfile: ptr.To("p.json")}}},
			check: func(t *testing.T, p Policy) {
				expect(t, "fsGroup", *p.PodSecurityContext.FSGroup, int64(1000))
				expect(t, "seccomp", p.PodSecurityContext.SeccompProfile.Type, corev1.SeccompProfileTypeLocalhost)
			},
		},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			before := []*infrav1.JobsSpec{tc.own.DeepCopy(), tc.defaults.DeepCopy(), tc.clusterOwn.DeepCopy()}
			p := MergePolicy(tc.own, tc.defaults, tc.clusterOwn)
			tc.check(t, p)
			after := []*infrav1.JobsSpec{tc.own, tc.defaults, tc.clusterOwn}
			if !equality.Semantic.DeepEqual(before, after) {
				t.Fatal("MergePolicy changed its arguments")
			}
		})
	}
}

func TestPolicyValidate(t *testing.T) {
	testCases := []struct {
		name                      string
		own, defaults, clusterOwn *infrav1.JobsSpec
		wantErr                   []string
	}{
		{name: "defaults are valid"},
		{name: "lock below deadline across levels is valid",
			own: &infrav1.JobsSpec{LockTimeoutSeconds: ptr.To[int32](600)}, defaults: &infrav1.JobsSpec{ActiveDeadlineSeconds: ptr.To[int64](601)}},
		{
			name:     "object lock against an inherited deadline",
			own:      &infrav1.JobsSpec{LockTimeoutSeconds: ptr.To[int32](900)},
			defaults: &infrav1.JobsSpec{ActiveDeadlineSeconds: ptr.To[int64](600)},
			wantErr: []string{"lockTimeoutSeconds 900 (configured in spec.jobs) must be lower than activeDeadlineSeconds 600 " +
				"(configured in the TerraformCluster's spec.defaults.jobs): lower lockTimeoutSeconds or raise activeDeadlineSeconds"},
		},
		{
			name:       "configured deadline against the built-in lock timeout",
			clusterOwn: &infrav1.JobsSpec{ActiveDeadlineSeconds: ptr.To[int64](300)},
			wantErr: []string{"lockTimeoutSeconds 300 (built-in default)",
				"activeDeadlineSeconds 300 (configured in the TerraformCluster's spec.jobs)"},
		},
		{
			name:    "configured lock timeout against the built-in deadline",
			own:     &infrav1.JobsSpec{LockTimeoutSeconds: ptr.To[int32](3600)},
			wantErr: []string{"lockTimeoutSeconds 3600 (configured in spec.jobs)", "activeDeadlineSeconds 3600 (built-in default)"},
		},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			err := MergePolicy(tc.own, tc.defaults, tc.clusterOwn).Validate()
			if len(tc.wantErr) == 0 {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("Validate accepted the policy")
			}
			for _, want := range tc.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("message %q does not contain %q", err, want)
				}
			}
		})
	}
}

func expect[T any](t *testing.T, what string, got, want T) {
	t.Helper()
	if !equality.Semantic.DeepEqual(got, want) {
		t.Errorf("%s:\n got %+v\nwant %+v", what, got, want)
	}
}

// TestPolicySecrets: the Secrets a pod reads, needed or optional.
func TestPolicySecrets(t *testing.T) {
	keyRef := func(name string, optional *bool) corev1.EnvVar {
		return corev1.EnvVar{Name: "V_" + name, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: "k", Optional: optional}}}
	}
	p := Policy{Env: []corev1.EnvVar{{Name: "PLAIN", Value: "v"}, keyRef("env-required", nil), keyRef("env-false", ptr.To(false)), keyRef("env-optional", ptr.To(true))},
		ImagePullSecrets: []corev1.LocalObjectReference{{Name: "pull"}}}
	needed, optional := p.Secrets("creds")
	if !slices.Equal(needed, []string{"creds", "env-required", "env-false"}) || !slices.Equal(optional, []string{"env-optional", "pull"}) {
		t.Errorf("Secrets = %v, %v", needed, optional)
	}
	if needed, _ := p.Secrets(""); slices.Contains(needed, "") {
		t.Errorf("no credentials Secret named %q", "")
	}
}
