package lifecycle_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/records"
	"captf.io/captf/internal/test/kubelet"
	"captf.io/captf/pkg/state"
)

// TestLostOwnerReferencesAreRepaired: Secrets that lost their owner
// reference to the TerraformCluster and their state protection (a backup
// tool restored them without either, say) would outlive the cluster, or go
// with a foreground deletion before the destroy; the next pass gives both
// back to the state, the inputs records and the plan key, and says so.
func TestLostOwnerReferencesAreRepaired(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "tofu")
	kubelet.StartIn(t, env, w.ns, kubelet.ExampleImages(t))
	w.checkStatuses()
	tc := w.newCluster(nil)
	w.waitProvisioned(tc)
	suffix, err := state.Suffix(w.ns, state.KindCluster, tc.Name)
	if err != nil {
		t.Fatal(err)
	}
	// The state last: a pass that finds the state stray repairs the others
	// with it, so a pass running between two of these writes must not see
	// the state stripped before the rest.
	names := []string{records.AttemptName(state.KindCluster, tc.Name), records.AppliedName(state.KindCluster, tc.Name),
		"captf-plankey-c-" + tc.Name, state.SecretName(suffix)}
	for _, name := range names {
		w.update(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: name}}, func(o client.Object) {
			o.SetOwnerReferences(nil)
			o.SetFinalizers(nil)
		})
	}
	w.annotate(tc, "test.captf.io/poke", "owners") // the next pass
	w.waitEvent(tc.Name, "OwnerReferencesRepaired")
	for _, name := range names {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: name}}
		w.eventually(30*time.Second, "Secret "+name+" owned by the cluster and protected again", func() (bool, error) {
			w.get(s)
			if !slices.Contains(s.Finalizers, infrav1.StateProtectionFinalizer) {
				return false, nil
			}
			for _, ref := range s.OwnerReferences {
				if ref.UID == tc.UID {
					return true, nil
				}
			}
			return false, nil
		})
	}
	for _, ev := range w.eventNotes(tc.Name) {
		if ev[0] == "OwnerReferencesRepaired" && !strings.Contains(ev[1], "4 Secrets") {
			t.Errorf("OwnerReferencesRepaired says %q, want the 4 Secrets counted", ev[1])
		}
	}
}
