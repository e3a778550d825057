package lifecycle_test

import (
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/jobs"
	"captf.io/captf/internal/test/envtest"
	"captf.io/captf/internal/test/kubelet"
	"captf.io/captf/pkg/state"
)

// TestChoresGoOnWhileTheRunnerRBACFails: a pass whose runner RBAC cannot
// be written (an admission policy refuses the runner's ServiceAccount)
// starts no Job and fails, but its chores still run: a pool's autoscaling
// write-back reaches its MachinePool, as it did when the write-back ran
// before the credentials step.
func TestChoresGoOnWhileTheRunnerRBACFails(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "tofu")
	kubelet.StartIn(t, env, w.ns, kubelet.ExampleImages(t))
	tc := w.newCluster(nil)
	w.waitProvisioned(tc)
	tmp := w.newPool("pool", 3)
	w.waitProvisioned(tmp)

	// Refuse every new ServiceAccount of the namespace, then take the
	// runner's away: the credentials step's RBAC write now fails.
	w.refuseCreates("serviceaccounts", "false", "no new ServiceAccounts here", "probe")
	if err := env.Client.Delete(t.Context(), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: jobs.DefaultServiceAccountName}}); err != nil {
		t.Fatal(err)
	}

	// The autoscaler takes the pool: the write-back marks the MachinePool,
	// while the pool's passes fail on the RBAC.
	mp := &clusterv1.MachinePool{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: "pool"}}
	w.update(mp, func(o client.Object) {
		o.SetAnnotations(map[string]string{infrav1.AutoscalerMinSizeAnnotation: "1", infrav1.AutoscalerMaxSizeAnnotation: "5"})
	})
	w.eventually(time.Minute, "the RBAC failure reported and the write-back done", func() (bool, error) {
		w.get(tmp)
		w.get(mp)
		c := meta.FindStatusCondition(tmp.Status.Conditions, infrav1.RunnerRBACReadyCondition)
		return c != nil && c.Reason == infrav1.RBACFailedReason && mp.Annotations[infrav1.ReplicasManagedByAnnotation] == "captf", nil
	})
	wantConditions(t, tmp, map[string]string{infrav1.AutoscalingActiveCondition: infrav1.ReplicasManagedByModuleReason})
	if tmp.Status.ActiveJob != nil {
		t.Errorf("a Job started while the runner RBAC fails: %+v", tmp.Status.ActiveJob)
	}
}

// TestARefusedMirrorWriteStartsNoJob: the pass takes the credentials as
// ready once the chore MirrorCredentials has written the mirror; when an
// admission policy refuses that write, CredentialsMirrored says so
// (MirrorFailed) and no Job starts. Once the policy goes, the cluster
// provisions.
func TestARefusedMirrorWriteStartsNoJob(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "tofu")
	kubelet.StartIn(t, env, w.ns, kubelet.ExampleImages(t))
	allow := w.refuseCreates("secrets", "!object.metadata.name.startsWith('captf-creds-')", "no credentials mirrors here", "captf-creds-probe")

	tc := w.newCluster(nil)
	w.eventually(time.Minute, "the refused mirror reported", func() (bool, error) {
		w.get(tc)
		c := conditionOf(tc, infrav1.CredentialsMirroredCondition)
		return c != nil && c.Reason == infrav1.MirrorFailedReason && strings.Contains(c.Message, "rejected the Secret as invalid without naming a field"), nil
	})
	if n := len(w.jobsOf(state.KindCluster, tc.Name, "")); n != 0 || tc.Status.ActiveJob != nil {
		t.Fatalf("%d Jobs started (active: %+v) while the credentials mirror could not be written", n, tc.Status.ActiveJob)
	}

	allow()
	w.passOver(tc)
	w.waitProvisioned(tc)
}

// refuseCreates makes the API server refuse, in the world's namespace,
// the creation of the resource (of the core group) whose object fails
// the CEL expression, with message; it returns when a probe of that name
// is refused. allow lifts the refusal and returns once a probe is taken.
func (w *world) refuseCreates(resource, expression, message, probe string) (allow func()) {
	w.t.Helper()
	return envtest.Refuse(w.t, env.Client, envtest.Refusal{Namespace: w.ns, Resource: resource,
		Operations: []admissionv1.OperationType{admissionv1.Create}, Expression: expression, Message: message,
		Probe: func() client.Object { return w.probe(resource, probe) }})
}

// probe is an empty object of resource (serviceaccounts or secrets) named
// name in the world's namespace.
func (w *world) probe(resource, name string) client.Object {
	om := metav1.ObjectMeta{Namespace: w.ns, Name: name}
	if resource == "serviceaccounts" {
		return &corev1.ServiceAccount{ObjectMeta: om}
	}
	return &corev1.Secret{ObjectMeta: om}
}
