package workspace

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/conditions"
	"captf.io/captf/internal/roles"
)

// providerIDHealth judges a machine whose provider_id turned null after it
// had one (conditions.ProviderIDHealth).
func (p *pass) providerIDHealth(cond metav1.Condition, c roles.Contract, newReading bool) metav1.Condition {
	if !c.ProviderIDMissing() {
		return cond
	}
	return conditions.ProviderIDHealth(meta.FindStatusCondition(p.role.View(p.before).Status.Conditions, infrav1.InfrastructureHealthyCondition), newReading)
}

// countSample keeps the count of unhealthy samples of a kind that has one
// (roles.Remediator): a new reading counts, a pass over the same one
// does not.
func (p *pass) countSample(health metav1.Condition, newReading bool) {
	if r, ok := p.remediator(); ok && newReading {
		r.CountSample(p.obj, health)
	}
}
