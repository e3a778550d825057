package webhooks

import (
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"

	infrav1 "captf.io/captf/api/v1alpha1"
	captfjobs "captf.io/captf/internal/jobs"
)

// reservedEnvPrefixes are env name prefixes the runner owns: TF_* would move
// the state or override inputs, KUBE_* the backend.
var reservedEnvPrefixes = []string{"TF_", "KUBE_"}

// validateJobs checks a jobs policy (spec.jobs, or a TerraformCluster's
// spec.defaults.jobs) at path.
func validateJobs(jobs *infrav1.JobsSpec, path *field.Path) field.ErrorList {
	if jobs == nil {
		return nil
	}
	var errs field.ErrorList
	errs = append(errs, captfjobs.ValidateSecurityContext(jobs.SecurityContext, path.Child("securityContext"))...)
	errs = append(errs, captfjobs.ValidatePodSecurityContext(jobs.PodSecurityContext, path.Child("podSecurityContext"))...)
	for i, e := range jobs.Env {
		for _, p := range reservedEnvPrefixes {
			if strings.HasPrefix(e.Name, p) {
				errs = append(errs, field.Invalid(path.Child("env").Index(i).Child("name"), e.Name,
					"names starting with TF_ or KUBE_ are reserved: the runner owns them; rename the variable"))
				break
			}
		}
	}
	return errs
}

// jobsChanged reports a change of a jobs policy. Rules are enforced on
// create and when the policy changes, so an older object that a newer rule
// would refuse still accepts unrelated updates.
func jobsChanged(oldJobs, newJobs *infrav1.JobsSpec) bool {
	return !equality.Semantic.DeepEqual(oldJobs, newJobs)
}
