package roles

import (
	"time"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/jobs"
	"captf.io/captf/pkg/state"
)

// DefaultMembershipRefresh is a pool's membership refresh interval when
// neither it nor its cluster's defaults set one.
const DefaultMembershipRefresh = 60 * time.Second

// Effective are an object's settings once inheritance from its cluster's
// TerraformCluster is resolved: own field, then the cluster's
// spec.defaults, then the cluster's own same-named field, then built-in.
// A TerraformCluster never inherits its own defaults.
type Effective struct {
	IdentityRef *infrav1.IdentityReference
	Policy      jobs.Policy
	// DeletionPolicy is "" when it cannot be resolved: a machine or pool
	// that sets none and whose TerraformCluster is not found.
	DeletionPolicy infrav1.DeletionPolicy
	// DriftInterval between drift checks; 0 disables them.
	DriftInterval time.Duration
	DriftAction   infrav1.DriftAction
	// MembershipInterval is a pool's membership refresh (0: not a pool).
	MembershipInterval time.Duration
}

// Resolve computes the effective settings of w, of kind, whose cluster's
// TerraformCluster is tc (nil: not found), with the manager's default drift
// interval.
func Resolve(kind string, w Workload, tc *infrav1.TerraformCluster, driftDefault time.Duration) Effective {
	e := Effective{IdentityRef: w.IdentityRef, DeletionPolicy: w.DeletionPolicy, DriftAction: infrav1.DriftActionReport}
	var defaults *infrav1.ClusterDefaults
	if tc != nil && kind != state.KindCluster {
		defaults = tc.Spec.Defaults
	}
	if defaults == nil {
		defaults = &infrav1.ClusterDefaults{}
	}
	if kind == state.KindCluster || tc == nil {
		e.Policy = jobs.MergePolicy(w.Jobs, nil, nil)
	} else {
		e.Policy = jobs.MergePolicy(w.Jobs, defaults.Jobs, tc.Spec.Jobs)
		if e.IdentityRef == nil {
			e.IdentityRef = firstIdentity(defaults.IdentityRef, tc.Spec.IdentityRef)
		}
		if e.DeletionPolicy == "" {
			e.DeletionPolicy = firstPolicy(defaults.DeletionPolicy, tc.Spec.DeletionPolicy)
		}
	}
	// A machine or pool that sets none and whose cluster cannot be found
	// stays unresolved (""): it is neither destroyed nor retained.
	if e.DeletionPolicy == "" && (kind == state.KindCluster || tc != nil) {
		e.DeletionPolicy = infrav1.DeletionPolicyDestroy
	}
	interval := w.DriftInterval
	if interval == nil && defaults.Drift != nil {
		interval = defaults.Drift.IntervalSeconds
	}
	e.DriftInterval = driftDefault
	if interval != nil {
		e.DriftInterval = time.Duration(*interval) * time.Second
	}
	switch kind {
	case state.KindCluster:
		if tcOwn := w.Object.(*infrav1.TerraformCluster); tcOwn.Spec.Drift != nil && tcOwn.Spec.Drift.Action != "" {
			e.DriftAction = tcOwn.Spec.Drift.Action
		}
	case state.KindMachinePool:
		// A pool's drift feeds its instance counts: never disabled.
		if e.DriftInterval == 0 {
			e.DriftInterval = driftDefault
		}
		e.DriftAction = poolDriftAction(w.Object.(*infrav1.TerraformMachinePool), defaults, tc)
		e.MembershipInterval = DefaultMembershipRefresh
		if own := w.Object.(*infrav1.TerraformMachinePool).Spec.MembershipRefreshIntervalSeconds; own != nil {
			e.MembershipInterval = time.Duration(*own) * time.Second
		} else if defaults.MembershipRefreshIntervalSeconds != nil {
			e.MembershipInterval = time.Duration(*defaults.MembershipRefreshIntervalSeconds) * time.Second
		}
	}
	return e
}

func poolDriftAction(tmp *infrav1.TerraformMachinePool, defaults *infrav1.ClusterDefaults, tc *infrav1.TerraformCluster) infrav1.DriftAction {
	switch {
	case tmp.Spec.Drift != nil && tmp.Spec.Drift.Action != "":
		return tmp.Spec.Drift.Action
	case defaults.Drift != nil && defaults.Drift.Action != "":
		return defaults.Drift.Action
	case tc != nil && tc.Spec.Drift != nil && tc.Spec.Drift.Action != "":
		return tc.Spec.Drift.Action
	}
	return infrav1.DriftActionReport
}

func firstIdentity(refs ...*infrav1.IdentityReference) *infrav1.IdentityReference {
	for _, r := range refs {
		if r != nil {
			return r
		}
	}
	return nil
}

func firstPolicy(ps ...infrav1.DeletionPolicy) infrav1.DeletionPolicy {
	for _, p := range ps {
		if p != "" {
			return p
		}
	}
	return ""
}
