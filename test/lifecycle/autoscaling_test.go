package lifecycle_test

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/test/kubelet"
)

// TestAutoscaledPoolWritesItsSizeBack: with the autoscaler annotations the
// module owns the size (clamped to [min, max]) and CAPTF writes the
// observed replicas back to the MachinePool, marked as managed by captf.
func TestAutoscaledPoolWritesItsSizeBack(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "tofu")
	kubelet.StartIn(t, env, w.ns, kubelet.ExampleImages(t))
	w.checkStatuses()
	tc := w.newCluster(nil)
	w.waitProvisioned(tc)
	tmp := w.newPool("pool", 7)
	mp := &clusterv1.MachinePool{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: "pool"}}
	w.update(mp, func(o client.Object) {
		o.SetAnnotations(map[string]string{infrav1.AutoscalerMinSizeAnnotation: "1", infrav1.AutoscalerMaxSizeAnnotation: "5"})
	})
	w.waitProvisioned(tmp)
	w.eventually(time.Minute, "the observed size written back", func() (bool, error) {
		w.get(mp)
		return ptr.Deref(mp.Spec.Replicas, 0) == 5, nil
	})
	if mp.Annotations[infrav1.ReplicasManagedByAnnotation] != "captf" {
		t.Errorf("MachinePool annotations %v, want %s=captf", mp.Annotations, infrav1.ReplicasManagedByAnnotation)
	}
	w.get(tmp)
	wantConditions(t, tmp, map[string]string{infrav1.AutoscalingActiveCondition: infrav1.ReplicasManagedByModuleReason})
	if ptr.Deref(tmp.Status.Replicas, 0) != 5 || len(tmp.Spec.ProviderIDList) != 5 {
		t.Errorf("pool replicas %v, providerIDList %d; want 5 (7 clamped to max 5)", tmp.Status.Replicas, len(tmp.Spec.ProviderIDList))
	}
	w.waitEvent(tmp.Name, "ReplicasWrittenBack")
}
