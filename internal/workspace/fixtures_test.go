package workspace

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/conditions"
	"captf.io/captf/internal/decide"
)

// newCluster creates the namespace ns and, in it, the TerraformCluster
// name (of a cluster module image, identity "cloud", with finalizers).
func newCluster(t *testing.T, ns, name string, finalizers ...string) *infrav1.TerraformCluster {
	t.Helper()
	if err := env.Client.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	tc := &infrav1.TerraformCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Finalizers: finalizers},
		Spec: infrav1.TerraformClusterSpec{Source: infrav1.SourceSpec{Image: "example.test/cluster:1"}, IdentityRef: &infrav1.IdentityReference{Name: "cloud"}}}
	if err := env.Client.Create(t.Context(), tc); err != nil {
		t.Fatal(err)
	}
	return tc
}

// renewCluster creates, once old is gone, a new TerraformCluster of its
// name (as GitOps would), holding finalizers, and returns it.
func renewCluster(t *testing.T, old *infrav1.TerraformCluster, finalizers ...string) *infrav1.TerraformCluster {
	t.Helper()
	tc := &infrav1.TerraformCluster{ObjectMeta: metav1.ObjectMeta{Namespace: old.Namespace, Name: old.Name, Finalizers: finalizers}, Spec: old.Spec}
	if err := env.Client.Create(t.Context(), tc); err != nil {
		t.Fatal(err)
	}
	return tc
}

// endPass ends a pass as patchStatus does: its live reports end (ok: it
// completed), its conditions are computed into st, and, the status
// written, what it observed is remembered.
func endPass(p *pass, st *infrav1.WorkspaceStatus, ok bool) {
	p.endLiveReports(st, ok)
	var ran []conditions.Step
	if ok {
		ran = p.ran
	}
	st.Conditions = conditions.Status(conditions.Pass{Previous: st.Conditions, Reported: p.conds, Dropped: p.dropped, Ran: ran, FromState: conditions.NoApplyYet})
	for _, f := range p.observations {
		f()
	}
}

// doJobChores does the chores checkActive's findings choose (a stuck Job
// deleted, one that cannot pull its image stopped), as the pass does
// after deciding.
func doJobChores(t *testing.T, p *pass) {
	t.Helper()
	u := decide.Upkeep{StuckJob: p.running.stuck != nil, UnpulledJob: p.running.unpulled != nil}
	if err := p.doChores(t.Context(), decide.Chores(decide.Snapshot{JobActive: p.active != nil, Upkeep: u})); err != nil {
		t.Fatal(err)
	}
}
