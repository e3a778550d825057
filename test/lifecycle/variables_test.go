package lifecycle_test

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/test/kubelet"
	"captf.io/captf/pkg/state"
)

// TestVariablesSourceChangeWakes: a change to a labelled variablesFrom
// source reaches the cluster that uses it with no poke: a new value in the
// ConfigMap is applied, and a Secret source that loses its label is
// reported missing. (A pass already due may see the change first; the
// wake itself is proven by TestVariablesSourceWakesItsUsers.)
func TestVariablesSourceChangeWakes(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "tofu")
	kubelet.StartIn(t, env, w.ns, kubelet.ExampleImages(t))
	w.checkStatuses()
	labelled := map[string]string{infrav1.VariablesLabel: "true"}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: "settings", Labels: labelled},
		Data: map[string]string{"description": "first"}}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: "secret-settings", Labels: labelled},
		Data: map[string][]byte{"description": []byte("overridden by the ConfigMap")}}
	w.create(secret)
	w.create(cm)
	tc := w.newCluster(func(tc *infrav1.TerraformCluster) {
		tc.Spec.VariablesFrom = []infrav1.VariablesFromSource{
			{SecretRef: &infrav1.LocalObjectReference{Name: secret.Name}},
			{ConfigMapRef: &infrav1.LocalObjectReference{Name: cm.Name}},
		}
	})
	w.waitProvisioned(tc)

	w.update(cm, func(o client.Object) { o.(*corev1.ConfigMap).Data["description"] = "second" })
	w.eventually(time.Minute, "the new value applied", func() (bool, error) {
		return w.succeeded(state.KindCluster, tc.Name, "apply") == 2, nil
	})

	w.update(secret, func(o client.Object) { delete(o.(*corev1.Secret).Labels, infrav1.VariablesLabel) })
	w.eventually(time.Minute, "the unlabelled Secret reported missing", func() (bool, error) {
		w.get(tc)
		c := conditionOf(tc, infrav1.DependenciesReadyCondition)
		return c != nil && c.Status == metav1.ConditionFalse && c.Reason == infrav1.VariablesSourceNotFoundReason, nil
	})
}
