package lifecycle_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/records"
	"captf.io/captf/internal/test/kubelet"
	"captf.io/captf/pkg/state"
)

// TestDestroyFallsBackToTheTag: the image digest a machine's apply pinned
// is gone from the registry (here: the applied record names a digest the
// node does not have). Its destroy Job cannot pull it; after the pull
// grace the manager gives up on that image without counting a failure
// (ImagePullFallback) and runs the destroy with the recorded tag.
func TestDestroyFallsBackToTheTag(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "tofu")
	k := kubelet.StartIn(t, env, w.ns, kubelet.ExampleImages(t))
	w.checkStatuses()
	w.newCluster(nil)
	tm := w.newMachine("m-fallback")
	w.waitProvisioned(tm)
	if tm.Status.Source == nil || !strings.Contains(tm.Status.Source.ImageDigest, "@sha256:") {
		t.Fatalf("status.source = %+v, want the digest the apply pinned", tm.Status.Source)
	}

	// The registry lost the pinned digest.
	applied := &corev1.Secret{}
	key := client.ObjectKey{Namespace: w.ns, Name: records.AppliedName(state.KindMachine, tm.Name)}
	if err := env.Client.Get(t.Context(), key, applied); err != nil {
		t.Fatal(err)
	}
	lost := "local/noop-machine@sha256:" + strings.Repeat("0", 64)
	applied.Annotations[infrav1.ImageDigestAnnotation] = lost
	if err := env.Client.Update(t.Context(), applied); err != nil {
		t.Fatal(err)
	}

	if err := env.Client.Delete(t.Context(), &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: tm.Name}}); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(t.Context(), tm); err != nil {
		t.Fatal(err)
	}
	w.eventually(imagePullGrace+2*time.Minute, "the machine destroyed and gone", func() (bool, error) {
		err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(tm), tm)
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})

	w.waitEvent(tm.Name, "ImagePullFallback")
	events := w.eventNotes(tm.Name)
	fallback := slices.IndexFunc(events, func(e [2]string) bool { return e[0] == "ImagePullFallback" })
	if fallback < 0 {
		t.Fatalf("no ImagePullFallback event; events: %v", events)
	}
	if note := events[fallback][1]; !strings.Contains(note, lost) || !strings.Contains(note, "retrying destroy with "+w.image("noop-machine")) {
		t.Errorf("ImagePullFallback note %q does not name the lost digest and the tag tried next", note)
	}
	// The pass that gave up on the digest started the destroy again with
	// the tag: a second fallback would mean the digest was tried again.
	if n := len(slices.DeleteFunc(slices.Clone(events), func(e [2]string) bool { return e[0] != "ImagePullFallback" })); n != 1 {
		t.Errorf("%d ImagePullFallback events, want 1: the Job after the fallback ran the lost digest again; events: %v", n, events)
	}
	for _, e := range events {
		if e[0] == "JobFailed" || e[0] == "JobDeadlineExceeded" {
			t.Errorf("the fallback counted as a failure: %s %s", e[0], e[1])
		}
	}
	if !slices.ContainsFunc(k.Runs(), func(r kubelet.Run) bool {
		return r.Namespace == w.ns && r.Op == "destroy" && r.Image == w.image("noop-machine") && r.ExitCode == 0
	}) {
		t.Error("no destroy ran with the recorded tag")
	}
}

// eventNotes lists the reasons and notes of the events regarding an
// object, oldest first.
func (w *world) eventNotes(name string) [][2]string { return w.eventsOfType(name, "") }

// eventWarnings lists the reasons and notes of the Warning events
// regarding an object, oldest first.
func (w *world) eventWarnings(name string) [][2]string {
	return w.eventsOfType(name, corev1.EventTypeWarning)
}

// eventsOfType lists the reasons and notes of the events of typ ("" for
// all) regarding an object, oldest first.
func (w *world) eventsOfType(name, typ string) [][2]string {
	w.t.Helper()
	var list corev1.EventList
	if err := env.Client.List(w.t.Context(), &list, client.InNamespace(w.ns)); err != nil {
		w.t.Fatal(err)
	}
	slices.SortFunc(list.Items, func(a, b corev1.Event) int { return a.CreationTimestamp.Compare(b.CreationTimestamp.Time) })
	var out [][2]string
	for _, e := range list.Items {
		if e.InvolvedObject.Name == name && (typ == "" || e.Type == typ) {
			out = append(out, [2]string{e.Reason, e.Message})
		}
	}
	return out
}
