package runner_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/runner"
)

// With --event-object the runner posts its progress on the object, related
// to the Job, and never an input value.
func TestProgressEvents(t *testing.T) {
	f := newFixture(t, "tofu", "module")
	const token = "tok-event-SENSITIVE-0123456789"
	setInputs(f, map[string]any{"name": "demo", "generation": 1, "token": token})
	ctx := context.Background()
	tc := &infrav1.TerraformCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "demo", Namespace: f.Namespace},
		Spec: infrav1.TerraformClusterSpec{Source: infrav1.SourceSpec{Image: "local/noop:tofu"},
			IdentityRef: &infrav1.IdentityReference{Name: "noop"}},
	}
	if err := env.Client.Create(ctx, tc); err != nil {
		t.Fatal(err)
	}
	res, code := f.Run(runner.OpApply, func(o *runner.Options) {
		o.EventObject = "infrastructure.cluster.x-k8s.io/v1alpha1/TerraformCluster/" + f.Namespace + "/demo/" + string(tc.UID)
		o.JobName = "captf-c-demo-apply-a1-0a1b2c"
	})
	if code != runner.ExitOK {
		t.Fatalf("apply failed: %+v", res.Error)
	}
	var list eventsv1.EventList
	if err := env.Client.List(ctx, &list, client.InNamespace(f.Namespace)); err != nil {
		t.Fatal(err)
	}
	var reasons []string
	for _, e := range list.Items {
		reasons = append(reasons, e.Reason)
		if e.Regarding.UID != tc.UID || e.Related == nil || e.Related.Name != "captf-c-demo-apply-a1-0a1b2c" || e.ReportingController != runner.ReportingController {
			t.Errorf("event %s: regarding %+v, related %+v, controller %s", e.Reason, e.Regarding, e.Related, e.ReportingController)
		}
		if strings.Contains(e.Note, token) {
			t.Errorf("event %s carries an input value: %q", e.Reason, e.Note)
		}
	}
	for _, want := range []string{runner.EventRunStarted, runner.EventStepStarted, runner.EventStepSucceeded, runner.EventResourcesChanged, runner.EventRunFinished} {
		if !slices.Contains(reasons, want) {
			t.Errorf("no %s event among %v", want, reasons)
		}
	}
}

// Events never fail a run: when they cannot be posted (here, into a
// namespace that does not exist) the runner gives up after three tries and
// the run succeeds.
func TestEventsNeverFailTheRun(t *testing.T) {
	f := newFixture(t, "tofu", "module")
	res, code := f.Run(runner.OpApply, func(o *runner.Options) {
		o.EventObject = "infrastructure.cluster.x-k8s.io/v1alpha1/TerraformCluster/no-such-namespace/demo/no-such-uid"
	})
	if code != runner.ExitOK || res.Error != nil {
		t.Fatalf("a run whose events cannot be posted failed: %+v", res.Error)
	}
}
