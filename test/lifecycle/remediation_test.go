package lifecycle_test

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/test/kubelet"
)

// terminatedMachineModule is the noop machine module whose instance
// reports itself terminated.
func terminatedMachineModule(t *testing.T) string {
	return moduleFrom(t, "noop-machine", func(files map[string]string) {
		files["outputs.tf"] = strings.Replace(files["outputs.tf"], `state = "running", healthy = true`, `state = "terminated", healthy = false`, 1)
	})
}

// TestTerminatedMachineAsksForRemediation: with remediation.annotateMachine
// a TerraformMachine whose instance is terminated asks Cluster API to
// remediate its Machine at once (cluster.x-k8s.io/remediate-machine).
func TestTerminatedMachineAsksForRemediation(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "tofu")
	images := kubelet.ExampleImages(t)
	images["local/terminated-machine:tofu"] = kubelet.Image{ModuleDir: terminatedMachineModule(t), Runtime: "tofu"}
	kubelet.StartIn(t, env, w.ns, images)
	w.checkStatuses()
	w.newCluster(func(tc *infrav1.TerraformCluster) {
		tc.Spec.Defaults = &infrav1.ClusterDefaults{Remediation: &infrav1.RemediationSpec{AnnotateMachine: ptr.To(true)}}
	})
	tm := w.newMachine("m-dead", "terminated-machine")
	w.waitProvisioned(tm)
	if c := conditionOf(tm, infrav1.InfrastructureHealthyCondition); c.Reason != infrav1.InstanceTerminatedReason {
		t.Fatalf("InfrastructureHealthy = %+v, want InstanceTerminated", c)
	}
	m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: tm.Name}}
	w.eventually(time.Minute, "the Machine annotated for remediation", func() (bool, error) {
		err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(m), m)
		_, ok := m.Annotations[infrav1.RemediateMachineAnnotation]
		return ok, err
	})
	if got := m.Annotations[infrav1.RemediationRequestedAnnotation]; got != infrav1.InstanceTerminatedReason {
		t.Errorf("captf.io/remediation-requested = %q, want the reason %s", got, infrav1.InstanceTerminatedReason)
	}
	w.waitEvent(tm.Name, "RemediationRequested")
}
