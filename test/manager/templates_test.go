package manager_test

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/webhooks"
)

// A template's stamped spec never changes: Cluster API clones it. Only
// Cluster API's topology dry-runs may send a changed one, and metadata
// stays mutable.
func TestTemplatesAreImmutable(t *testing.T) {
	startManager(t)
	ctx := context.Background()
	tmpl := &infrav1.TerraformMachineTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: "workers", Namespace: "default"},
		Spec: infrav1.TerraformMachineTemplateSpec{Template: infrav1.TerraformMachineTemplateResource{
			Spec: infrav1.TerraformMachineSpec{Source: infrav1.SourceSpec{Image: "local/noop-machine:tofu"}}}},
	}
	if err := env.Client.Create(ctx, tmpl); err != nil {
		t.Fatal(err)
	}
	update := func(change func(*infrav1.TerraformMachineTemplate), opts ...client.UpdateOption) error {
		return retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cur := &infrav1.TerraformMachineTemplate{}
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(tmpl), cur); err != nil {
				return err
			}
			change(cur)
			return env.Client.Update(ctx, cur, opts...)
		})
	}
	newImage := func(m *infrav1.TerraformMachineTemplate) { m.Spec.Template.Spec.Source.Image = "local/noop-machine:v2" }

	err := update(newImage)
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.template.spec") ||
		!strings.Contains(err.Error(), "create a new template") {
		t.Fatalf("want the changed template refused, got %v", err)
	}
	err = update(func(m *infrav1.TerraformMachineTemplate) {
		newImage(m)
		m.Annotations = map[string]string{webhooks.TopologyDryRunAnnotation: ""}
	}, client.DryRunAll)
	if err != nil {
		t.Fatalf("a topology dry-run was refused: %v", err)
	}
	if err := update(func(m *infrav1.TerraformMachineTemplate) { m.Labels = map[string]string{"tier": "gold"} }); err != nil {
		t.Fatalf("a metadata change was refused: %v", err)
	}
	got := &infrav1.TerraformMachineTemplate{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(tmpl), got); err != nil || got.Spec.Template.Spec.Source.Image != "local/noop-machine:tofu" {
		t.Fatalf("the template's spec changed: %v, %v", got.Spec.Template.Spec.Source.Image, err)
	}
}
