package lifecycle_test

import (
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/jobs"
	"captf.io/captf/internal/test/kubelet"
)

// TestARefusedPerRunSecretSaysSo: when an admission policy refuses a
// Job's per-run Secret (a quota of Secrets, a policy), ApplyJobSucceeded
// and a JobFailed warning name the Secret refused, not a Job that "could
// not be created" while it exists: the Job, made just before, cannot
// start without it, and goes once it is found stuck. Nothing takes it for
// an interrupted Job, and once the policy goes the cluster provisions.
func TestARefusedPerRunSecretSaysSo(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "tofu")
	kubelet.StartIn(t, env, w.ns, kubelet.ExampleImages(t))
	allow := w.refuseCreates("secrets", "!object.metadata.name.startsWith('"+jobs.PerRunSecretPrefix+"')", "no per-run Secrets here", jobs.PerRunSecretPrefix+"probe")

	tc := w.newCluster(nil)
	var job string
	w.eventually(time.Minute, "the refused per-run Secret reported", func() (bool, error) {
		w.get(tc)
		c := conditionOf(tc, infrav1.ApplyJobSucceededCondition)
		if c == nil || c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, "cannot run: its per-run Secret "+jobs.PerRunSecretPrefix) {
			return false, nil
		}
		job = strings.Fields(c.Message)[1]
		return true, nil
	})
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: w.ns, Name: job}, &batchv1.Job{}); err != nil {
		t.Fatalf("the Job whose per-run Secret was refused: %v; want it made, its pod unable to start", err)
	}
	w.eventually(30*time.Second, "a JobFailed warning naming the refused per-run Secret", func() (bool, error) {
		for _, e := range w.eventWarnings(tc.Name) {
			if e[0] == "JobFailed" && strings.Contains(e[1], "its per-run Secret "+jobs.PerRunSecretName(job)+" was refused") {
				return true, nil
			}
		}
		return false, nil
	})

	allow()
	w.passOver(tc)
	w.waitProvisioned(tc)
	for _, e := range w.eventWarnings(tc.Name) {
		if e[0] == "JobInterrupted" {
			t.Errorf("the Job that could not start was taken for an interrupted one: %s", e[1])
		}
	}
}
