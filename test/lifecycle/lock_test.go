package lifecycle_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/test/kubelet"
	"captf.io/captf/pkg/state"
)

// lockState writes the state lock as the kubernetes backend does, held by
// who under id.
func (w *world) lockState(kind, name, id, who string) {
	w.t.Helper()
	suffix, err := state.Suffix(w.ns, kind, name)
	if err != nil {
		w.t.Fatal(err)
	}
	info, _ := json.Marshal(map[string]string{"ID": id, "Operation": "OperationTypeApply", "Who": who, "Version": "1.12.6", "Created": time.Now().UTC().Format(time.RFC3339)})
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: state.LockLeaseName(suffix)}}
	err = env.Client.Get(w.t.Context(), client.ObjectKeyFromObject(lease), lease)
	lease.Annotations = map[string]string{"app.terraform.io/lock-info": string(info)}
	lease.Spec.HolderIdentity = ptr.To(id)
	if err != nil {
		lease.Labels = state.OwnerLabels(kind, name, w.cluster)
		w.create(lease)
		return
	}
	if err := env.Client.Update(w.t.Context(), lease); err != nil {
		w.t.Fatal(err)
	}
}

// TestStateLocks: a lock held by someone else is reported and never
// broken; a lock left by one of the object's own finished Jobs is handed
// to the next Job, which force-unlocks it and applies.
func TestStateLocks(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "tofu")
	kubelet.StartIn(t, env, w.ns, kubelet.ExampleImages(t))
	w.checkStatuses()
	tc := w.newCluster(nil)
	w.waitProvisioned(tc)

	w.lockState(state.KindCluster, tc.Name, "4a1f-foreign", "alice@laptop")
	w.annotate(tc, "poke", "1")
	w.eventually(time.Minute, "StateLocked reported", func() (bool, error) {
		w.get(tc)
		c := conditionOf(tc, infrav1.StateReadableCondition)
		return c != nil && c.Reason == infrav1.StateLockedReason, nil
	})
	if c := conditionOf(tc, infrav1.StateReadableCondition); !strings.Contains(c.Message, "alice@laptop") {
		t.Errorf("StateLocked message %q does not name the holder", c.Message)
	}

	// A lock whose holder is a pod of this object's own Job that no longer
	// exists is stale: the next apply force-unlocks it.
	const staleID = "9d3c-stale"
	w.lockState(state.KindCluster, tc.Name, staleID, "root@captf-c-demo-apply-a1-0a1b2c-zx9q4")
	w.update(&clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: w.cluster}}, func(o client.Object) {
		o.(*clusterv1.Cluster).Spec.ClusterNetwork.Services.CIDRBlocks = []string{"10.96.0.0/12"}
	})
	w.eventually(2*time.Minute, "the re-apply succeeded", func() (bool, error) {
		return w.succeeded(state.KindCluster, tc.Name, "apply") == 2, nil
	})
	var unlocked bool
	for _, j := range w.jobsOf(state.KindCluster, tc.Name, "apply") {
		args := strings.Join(j.Spec.Template.Spec.Containers[0].Args, " ")
		unlocked = unlocked || strings.Contains(args, staleID)
	}
	if !unlocked {
		t.Error("no apply Job was handed the stale lock to force-unlock")
	}
	w.waitEvent(tc.Name, "ForceUnlocked")
	w.eventually(time.Minute, "StateRead after the unlock", func() (bool, error) {
		w.get(tc)
		c := conditionOf(tc, infrav1.StateReadableCondition)
		return c != nil && c.Reason == infrav1.StateReadReason, nil
	})
}
