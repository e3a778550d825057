package jobs

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	infrav1 "captf.io/captf/api/v1alpha1"
)

// Built-in defaults of a jobs policy, used for every field no level sets.
const (
	DefaultSuccessfulJobsHistoryLimit int32 = 3
	DefaultFailedJobsHistoryLimit     int32 = 3
	DefaultActiveDeadlineSeconds      int64 = 3600
	DefaultLockTimeoutSeconds         int32 = 300
	DefaultServiceAccountName               = "captf-runner"
	// RunnerUID is the user of the runner init container and the default
	// fsGroup of the pod, so that the Secret files (mode 0440) are readable
	// whatever user the module image runs as.
	RunnerUID int64 = 65532
)

// Origin says which level of the inheritance chain a policy value came from.
type Origin string

// The levels, highest priority first.
const (
	// FromObject: the object's own spec.jobs.
	FromObject Origin = "spec.jobs"
	// FromClusterDefaults: the TerraformCluster's spec.defaults.jobs.
	FromClusterDefaults Origin = "the TerraformCluster's spec.defaults.jobs"
	// FromCluster: the TerraformCluster's own spec.jobs.
	FromCluster Origin = "the TerraformCluster's spec.jobs"
	// FromDefault: the built-in default.
	FromDefault Origin = "built-in default"
)

// Policy is the effective jobs policy of an object: every field resolved.
// It is computed on every reconcile by MergePolicy and never persisted.
type Policy struct {
	SuccessfulJobsHistoryLimit int32
	FailedJobsHistoryLimit     int32
	ActiveDeadlineSeconds      int64
	LockTimeoutSeconds         int32
	ServiceAccountName         string
	ImagePullSecrets           []corev1.LocalObjectReference
	Resources                  corev1.ResourceRequirements
	// Env is the merged spec.jobs.env as written, TF_ and KUBE_ names
	// included; Build leaves those out of the Job.
	Env                []corev1.EnvVar
	SecurityContext    *corev1.SecurityContext
	PodSecurityContext *corev1.PodSecurityContext

	// ActiveDeadlineFrom and LockTimeoutFrom say where the two values
	// Validate compares came from, for its message; SecurityContextFrom
	// and PodSecurityContextFrom where the security contexts did, for
	// ValidateSecurity's.
	ActiveDeadlineFrom     Origin
	LockTimeoutFrom        Origin
	SecurityContextFrom    Origin
	PodSecurityContextFrom Origin
}

// MergePolicy resolves the jobs policy of an object. own is the object's
// spec.jobs; clusterDefaults and clusterOwn are its TerraformCluster's
// spec.defaults.jobs and spec.jobs. A TerraformCluster itself passes only
// own (it ignores its own defaults). Any argument may be nil.
//
// Scalar fields take the first level that sets them, then the built-in
// default. env is merged by name, the higher level winning, in the order
// the names first appear from the highest level down; imagePullSecrets is
// the union, highest level first, without duplicates; resources,
// securityContext and podSecurityContext are taken whole from the first
// level that sets them. The chosen security contexts are then laid over
// the built-in ones field by field, and the module container always drops
// every capability and adds none.
func MergePolicy(own, clusterDefaults, clusterOwn *infrav1.JobsSpec) Policy {
	levels := []level{{own, FromObject}, {clusterDefaults, FromClusterDefaults}, {clusterOwn, FromCluster}}
	p := Policy{
		SuccessfulJobsHistoryLimit: DefaultSuccessfulJobsHistoryLimit,
		FailedJobsHistoryLimit:     DefaultFailedJobsHistoryLimit,
		ActiveDeadlineSeconds:      DefaultActiveDeadlineSeconds,
		LockTimeoutSeconds:         DefaultLockTimeoutSeconds,
		ServiceAccountName:         DefaultServiceAccountName,
		Resources:                  defaultResources(),
		ActiveDeadlineFrom:         FromDefault,
		LockTimeoutFrom:            FromDefault,
		SecurityContextFrom:        FromDefault,
		PodSecurityContextFrom:     FromDefault,
	}
	var sc *corev1.SecurityContext
	var psc *corev1.PodSecurityContext
	// Walk from the lowest level up so that each higher level overwrites.
	for i := len(levels) - 1; i >= 0; i-- {
		j, from := levels[i].spec, levels[i].from
		if j == nil {
			continue
		}
		if j.SuccessfulJobsHistoryLimit != nil {
			p.SuccessfulJobsHistoryLimit = *j.SuccessfulJobsHistoryLimit
		}
		if j.FailedJobsHistoryLimit != nil {
			p.FailedJobsHistoryLimit = *j.FailedJobsHistoryLimit
		}
		if j.ActiveDeadlineSeconds != nil {
			p.ActiveDeadlineSeconds, p.ActiveDeadlineFrom = *j.ActiveDeadlineSeconds, from
		}
		if j.LockTimeoutSeconds != nil {
			p.LockTimeoutSeconds, p.LockTimeoutFrom = *j.LockTimeoutSeconds, from
		}
		if j.ServiceAccountName != "" {
			p.ServiceAccountName = j.ServiceAccountName
		}
		if j.Resources != nil {
			p.Resources = *j.Resources.DeepCopy()
		}
		if j.SecurityContext != nil {
			sc, p.SecurityContextFrom = j.SecurityContext, from
		}
		if j.PodSecurityContext != nil {
			psc, p.PodSecurityContextFrom = j.PodSecurityContext, from
		}
	}
	for _, l := range levels {
		if l.spec == nil {
			continue
		}
		p.Env = mergeEnv(p.Env, l.spec.Env)
		p.ImagePullSecrets = mergePullSecrets(p.ImagePullSecrets, l.spec.ImagePullSecrets)
	}
	p.SecurityContext = containerSecurityContext(sc)
	p.PodSecurityContext = podSecurityContext(psc)
	return p
}

type level struct {
	spec *infrav1.JobsSpec
	from Origin
}

// Validate checks what the API cannot check on a single object: that the
// merged lock timeout is below the merged deadline, so a step waiting for
// the state lock gives up before Kubernetes kills the Job. Its message
// suits the JobPolicyInvalid condition: it names both effective values and
// where each came from. The manager skips the check for destroy and
// restore, which must run whatever the policy says.
func (p Policy) Validate() error {
	if int64(p.LockTimeoutSeconds) < p.ActiveDeadlineSeconds {
		return nil
	}
	return fmt.Errorf("lockTimeoutSeconds %d (%s) must be lower than activeDeadlineSeconds %d (%s): "+
		"lower lockTimeoutSeconds or raise activeDeadlineSeconds",
		p.LockTimeoutSeconds, describe(p.LockTimeoutFrom), p.ActiveDeadlineSeconds, describe(p.ActiveDeadlineFrom))
}

func describe(o Origin) string {
	switch o {
	case "", FromDefault:
		return string(FromDefault)
	default:
		return "configured in " + string(o)
	}
}

func mergeEnv(have, add []corev1.EnvVar) []corev1.EnvVar {
	seen := make(map[string]bool, len(have))
	for _, e := range have {
		seen[e.Name] = true
	}
	for _, e := range add {
		if !seen[e.Name] {
			seen[e.Name] = true
			have = append(have, *e.DeepCopy())
		}
	}
	return have
}

func mergePullSecrets(have, add []corev1.LocalObjectReference) []corev1.LocalObjectReference {
	seen := make(map[string]bool, len(have))
	for _, r := range have {
		seen[r.Name] = true
	}
	for _, r := range add {
		if !seen[r.Name] {
			seen[r.Name] = true
			have = append(have, r)
		}
	}
	return have
}

func defaultResources() corev1.ResourceRequirements {
	return corev1.ResourceRequirements{
		Requests: corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse("250m"),
			corev1.ResourceMemory: resource.MustParse("512Mi"),
		},
		Limits: corev1.ResourceList{
			corev1.ResourceMemory: resource.MustParse("2Gi"),
		},
	}
}

// containerSecurityContext lays user over the module container's defaults:
// seccomp RuntimeDefault, no privilege escalation, read-only root
// filesystem. runAsNonRoot and runAsUser are not defaulted: root images
// are common. Capabilities are always exactly "drop ALL".
func containerSecurityContext(user *corev1.SecurityContext) *corev1.SecurityContext {
	sc := &corev1.SecurityContext{}
	if user != nil {
		sc = user.DeepCopy()
	}
	if sc.SeccompProfile == nil {
		sc.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}
	}
	if sc.AllowPrivilegeEscalation == nil {
		sc.AllowPrivilegeEscalation = ptr.To(false)
	}
	if sc.ReadOnlyRootFilesystem == nil {
		sc.ReadOnlyRootFilesystem = ptr.To(true)
	}
	sc.Capabilities = &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}
	return sc
}

// podSecurityContext lays user over the pod defaults: seccomp
// RuntimeDefault and fsGroup 65532.
func podSecurityContext(user *corev1.PodSecurityContext) *corev1.PodSecurityContext {
	psc := &corev1.PodSecurityContext{}
	if user != nil {
		psc = user.DeepCopy()
	}
	if psc.SeccompProfile == nil {
		psc.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}
	}
	if psc.FSGroup == nil {
		psc.FSGroup = ptr.To(RunnerUID)
	}
	return psc
}

// Secrets are the Secrets a Job's pod reads under p, with credentials,
// the Secret it receives ("" for none): needed ones (the credentials, the
// env's required key references) and optional ones (optional key
// references, the image pull Secrets).
func (p Policy) Secrets(credentials string) (needed, optional []string) {
	if credentials != "" {
		needed = append(needed, credentials)
	}
	for _, e := range p.Env {
		if ref := e.ValueFrom; ref != nil && ref.SecretKeyRef != nil {
			if ref.SecretKeyRef.Optional != nil && *ref.SecretKeyRef.Optional {
				optional = append(optional, ref.SecretKeyRef.Name)
			} else {
				needed = append(needed, ref.SecretKeyRef.Name)
			}
		}
	}
	for _, s := range p.ImagePullSecrets {
		optional = append(optional, s.Name)
	}
	return needed, optional
}
