package lifecycle_test

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/credentials"
	"captf.io/captf/internal/test/kubelet"
)

// TestRevokedIdentityHoldsTheDestroy: the Jobs receive the identity's
// mirror; revoking the namespace deletes the mirror and reports
// NamespaceNotAllowed; a deletion then waits for its credentials instead
// of running a destroy without them, and goes on once they are back.
func TestRevokedIdentityHoldsTheDestroy(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "tofu")
	k := kubelet.StartIn(t, env, w.ns, kubelet.ExampleImages(t))
	w.checkStatuses()
	tc := w.newCluster(nil)
	w.waitProvisioned(tc)
	mirror := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: credentials.MirrorName(w.identity)}}
	w.get(mirror)
	if string(mirror.Data["NOOP_TOKEN"]) != credentialValue {
		t.Fatal("the mirror does not hold the identity's credentials")
	}
	for _, j := range w.jobsOf("TerraformCluster", tc.Name, "apply") {
		spec := j.Spec.Template.Spec
		if !strings.Contains(fmtEnvFrom(spec), mirror.Name) {
			t.Errorf("Job %s does not receive the mirror %s", j.Name, mirror.Name)
		}
	}

	identity := &infrav1.TerraformClusterIdentity{ObjectMeta: metav1.ObjectMeta{Name: w.identity}}
	w.update(identity, func(o client.Object) {
		o.(*infrav1.TerraformClusterIdentity).Spec.AllowedNamespaces = &infrav1.AllowedNamespaces{List: []string{"elsewhere"}}
	})
	// No poke: the identity's spec change wakes the objects that use it.
	w.eventually(time.Minute, "the revocation reported and the mirror deleted", func() (bool, error) {
		w.get(tc)
		c := conditionOf(tc, infrav1.IdentityAllowedCondition)
		err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(mirror), &corev1.Secret{})
		return c != nil && c.Reason == infrav1.NamespaceNotAllowedReason && apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})

	if err := env.Client.Delete(t.Context(), tc); err != nil {
		t.Fatal(err)
	}
	w.eventually(time.Minute, "the destroy waits for its credentials", func() (bool, error) {
		w.get(tc)
		c := conditionOf(tc, infrav1.ApplyJobSucceededCondition)
		return c != nil && c.Reason == infrav1.IdentityNotAllowedReason, nil
	})
	if n := len(w.jobsOf("TerraformCluster", tc.Name, "destroy")); n != 0 {
		t.Fatalf("a destroy started without its credentials (%d Jobs)", n)
	}

	w.update(identity, func(o client.Object) {
		o.(*infrav1.TerraformClusterIdentity).Spec.AllowedNamespaces = &infrav1.AllowedNamespaces{List: []string{w.ns}}
	})
	w.eventually(3*time.Minute, "the cluster destroyed and gone", func() (bool, error) {
		err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(tc), tc)
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
	if !w.destroyed(k, "TerraformCluster", tc.Name) {
		t.Error("no destroy ran once the credentials were back")
	}
	if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(mirror), &corev1.Secret{}); !apierrors.IsNotFound(err) {
		t.Errorf("the mirror is left behind after its last user went: %v", err)
	}
}

// fmtEnvFrom lists the Secrets a pod spec's containers take env from.
func fmtEnvFrom(spec corev1.PodSpec) string {
	var names []string
	for _, c := range spec.Containers {
		for _, e := range c.EnvFrom {
			if e.SecretRef != nil {
				names = append(names, e.SecretRef.Name)
			}
		}
	}
	return strings.Join(names, ",")
}

// TestIdentitySecretBackWakesItsUsers: a cluster whose identity's source
// Secret is missing reports SecretNotFound; once the Secret is created
// again, the identity's readiness wakes the cluster, which provisions
// without a poke, well before its next requeue.
func TestIdentitySecretBackWakesItsUsers(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "tofu")
	kubelet.StartIn(t, env, w.ns, kubelet.ExampleImages(t))
	source := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: "cloud"}}
	if err := env.Client.Delete(t.Context(), source); err != nil {
		t.Fatal(err)
	}
	tc := w.newCluster(nil)
	w.eventually(time.Minute, "the missing Secret reported", func() (bool, error) {
		w.get(tc)
		c := conditionOf(tc, infrav1.IdentityAllowedCondition)
		return c != nil && c.Reason == infrav1.SecretNotFoundReason, nil
	})
	w.create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: "cloud"}, Data: map[string][]byte{"NOOP_TOKEN": []byte(credentialValue)}})
	start := time.Now()
	// The identity's Ready change wakes its users at once (1 s here);
	// but when the identity never saw its Secret gone (its Ready stayed
	// True), nothing changes there and the users see the Secret back at
	// their next requeue, 30 s later (decide.GateRequeue): the bound
	// allows for that, on a loaded machine.
	w.eventually(2*time.Minute, "the identity allowed again", func() (bool, error) {
		w.get(tc)
		c := conditionOf(tc, infrav1.IdentityAllowedCondition)
		return c != nil && c.Status == metav1.ConditionTrue, nil
	})
	t.Logf("IdentityAllowed was True %s after the Secret came back", time.Since(start).Round(time.Second))
	w.waitProvisioned(tc)
}
