package lifecycle_test

import (
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/test/kubelet"
	"captf.io/captf/pkg/state"
)

// TestLostStateIsRestoredFromABackup: every new serial is backed up; a
// lost state holds the object until a restore request brings a backup
// back, after which it is readable and adopted again.
func TestLostStateIsRestoredFromABackup(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "tofu")
	kubelet.StartIn(t, env, w.ns, kubelet.ExampleImages(t))
	w.checkStatuses()
	tc := w.newCluster(nil)
	w.waitProvisioned(tc)
	w.eventually(time.Minute, "a backup listed in the status", func() (bool, error) {
		w.get(tc)
		return len(tc.Status.StateBackups) > 0, nil
	})
	backup := tc.Status.StateBackups[0]
	if backup.Serial != tc.Status.ObservedStateSerial || backup.Bytes == 0 {
		t.Errorf("status.stateBackups[0] = %+v, want the serial read (%d) with its size", backup, tc.Status.ObservedStateSerial)
	}
	w.waitEvent(tc.Name, "StateBackedUp")

	// A delete that is not CAPTF's cleanup (a user's, the garbage
	// collector's) leaves the state readable: its protection keeps it.
	suffix, _ := state.Suffix(w.ns, state.KindCluster, tc.Name)
	if err := env.Client.DeleteAllOf(t.Context(), &corev1.Secret{}, client.InNamespace(w.ns), client.MatchingLabelsSelector{Selector: state.Selector(suffix)}); err != nil {
		t.Fatal(err)
	}
	var kept corev1.SecretList
	if err := env.Client.List(t.Context(), &kept, client.InNamespace(w.ns), client.MatchingLabelsSelector{Selector: state.Selector(suffix)}); err != nil {
		t.Fatal(err)
	}
	if st, err := state.Decode(suffix, kept.Items); err != nil || st.Serial != backup.Serial {
		t.Fatalf("after a delete of the state Secrets: %v, %v; want serial %d still readable", st, err, backup.Serial)
	}
	// The state is lost: someone strips the protection by hand.
	for i := range kept.Items {
		s := &kept.Items[i]
		s.Finalizers = nil
		if err := env.Client.Update(t.Context(), s); err != nil {
			t.Fatal(err)
		}
	}
	w.annotate(tc, "poke", "1")
	w.eventually(time.Minute, "StateLost reported", func() (bool, error) {
		w.get(tc)
		c := conditionOf(tc, infrav1.StateReadableCondition)
		return c != nil && c.Reason == infrav1.StateLostReason, nil
	})
	applies := len(w.jobsOf(state.KindCluster, tc.Name, "apply"))

	w.annotate(tc, infrav1.RestoreStateAnnotation, strconv.FormatInt(backup.Serial, 10))
	w.eventually(2*time.Minute, "the state restored", func() (bool, error) {
		w.get(tc)
		c := conditionOf(tc, infrav1.StateReadableCondition)
		return tc.Status.LastRestoredSerial == backup.Serial && c != nil && c.Reason == infrav1.StateReadReason, nil
	})
	if _, ok := tc.Annotations[infrav1.RestoreStateAnnotation]; ok {
		t.Error("the consumed restore request is still on the object")
	}
	if c := conditionOf(tc, infrav1.RestoreJobSucceededCondition); c == nil || c.Reason != infrav1.StateRestoredReason {
		t.Errorf("RestoreJobSucceeded = %+v, want StateRestored", c)
	}
	w.wantStateAdopted(state.KindCluster, tc)
	w.passOver(tc)
	if n := len(w.jobsOf(state.KindCluster, tc.Name, "apply")); n != applies {
		t.Errorf("%d apply Jobs after the restore, want %d: the restored state carries the applied inputs hash", n, applies)
	}
}
