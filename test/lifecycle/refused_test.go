package lifecycle_test

import (
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/jobs"
	"captf.io/captf/internal/test/kubelet"
	"captf.io/captf/pkg/state"
)

// TestARefusedPerRunSecretSaysSo: when an admission policy refuses a
// Job's per-run Secret (a quota of Secrets, a policy), the Job, made just
// before and unable to start without it, goes at once rather than waiting
// to be found stuck; ApplyJobSucceeded and a JobFailed warning name the
// Secret refused, not a Job that "could not be created" while it exists.
// Nothing takes the refused Job for an apply of unknown outcome, and
// once the policy goes the cluster provisions.
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
		if c == nil || c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, "could not run: its per-run Secret "+jobs.PerRunSecretPrefix) {
			return false, nil
		}
		job = strings.Fields(c.Message)[1]
		return true, nil
	})
	w.eventually(30*time.Second, "the Job that could not start gone", func() (bool, error) {
		err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: w.ns, Name: job}, &batchv1.Job{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
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
	if a := w.attemptRecord(state.KindCluster, tc.Name); a != nil && a.UnconfirmedApply != "" {
		t.Errorf("the attempt record names %s as an apply of unknown outcome", a.UnconfirmedApply)
	}
}
