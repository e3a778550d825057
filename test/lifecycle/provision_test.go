package lifecycle_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/metrics"
	"captf.io/captf/internal/test/kubelet"
	"captf.io/captf/pkg/state"
)

// TestProvisionChangeAndDestroy takes a cluster, a machine and a pool
// from created to provisioned, changes inputs, and deletes them.
func TestProvisionChangeAndDestroy(t *testing.T) {
	t.Parallel()
	for _, runtime := range kubelet.Runtimes {
		t.Run(runtime, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, runtime)
			k := kubelet.StartIn(t, env, w.ns, kubelet.ExampleImages(t))
			sc := w.checkStatuses()

			tc := w.newCluster(nil)
			w.waitProvisioned(tc)
			if tc.Spec.ControlPlaneEndpoint.Host == "" || tc.Spec.ControlPlaneEndpoint.Port == 0 {
				t.Errorf("spec.controlPlaneEndpoint = %+v, want the module's endpoint", tc.Spec.ControlPlaneEndpoint)
			}
			if tc.Status.Exports == nil {
				t.Error("status.exports is not published")
			}
			wantConditions(t, tc, map[string]string{
				infrav1.ReadyCondition: infrav1.ReadyReason, infrav1.ApplyJobSucceededCondition: infrav1.ApplySucceededReason,
				infrav1.StateReadableCondition: infrav1.StateReadReason, infrav1.OutputsValidCondition: infrav1.OutputsValidReason,
				infrav1.InfrastructureHealthyCondition: infrav1.HealthyReason, infrav1.IdentityAllowedCondition: infrav1.IdentityAllowedReason,
				infrav1.CredentialsMirroredCondition: infrav1.MirroredReason, infrav1.RunnerRBACReadyCondition: infrav1.RBACReadyReason,
				infrav1.EndpointAvailableCondition: infrav1.EndpointAvailableReason,
			})
			w.wantStateAdopted(state.KindCluster, tc)
			if n := testutil.ToFloat64(metrics.JobsTotal.WithLabelValues(state.KindCluster, "apply", "succeeded")); n < 1 {
				t.Errorf("captf_jobs_total{apply,succeeded} = %v after a successful apply", n)
			}
			// The gauge moves right after the status it reports is written.
			w.eventually(10*time.Second, "captf_ready = 1 for a Ready cluster", func() (bool, error) {
				return testutil.ToFloat64(metrics.Ready.WithLabelValues(state.KindCluster, w.ns, tc.Name)) == 1, nil
			})

			tm := w.newMachine("m-0")
			tmp := w.newPool("pool", 2)
			w.waitProvisioned(tm)
			w.waitProvisioned(tmp)
			if !strings.HasPrefix(tm.Spec.ProviderID, "noop://") {
				t.Errorf("TerraformMachine spec.providerID = %q, want the module's provider_id", tm.Spec.ProviderID)
			}
			if len(tm.Status.Addresses) == 0 || tm.Status.Addresses[0].Type != clusterv1.MachineInternalIP {
				t.Errorf("status.addresses = %+v, want InternalIP first", tm.Status.Addresses)
			}
			if len(tmp.Spec.ProviderIDList) != 2 || ptr.Deref(tmp.Status.Replicas, -1) != 2 {
				t.Errorf("pool providerIDList %v, replicas %v; want 2 of each", tmp.Spec.ProviderIDList, tmp.Status.Replicas)
			}
			wantConditions(t, tm, map[string]string{infrav1.ReadyCondition: infrav1.ReadyReason, infrav1.InputsAppliedCondition: infrav1.InputsAppliedReason})
			wantConditions(t, tmp, map[string]string{infrav1.ReadyCondition: infrav1.ReadyReason, infrav1.InputsAppliedCondition: infrav1.InputsAppliedReason})
			for _, want := range []string{"JobCreated", "JobSucceeded", "Provisioned", "ProviderIDSet", "StateAdopted"} {
				w.waitEvent(tm.Name, want)
			}

			// Input changes: the pool and the cluster re-apply; the
			// machine never does.
			w.update(&clusterv1.MachinePool{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: "pool"}}, func(o client.Object) {
				o.(*clusterv1.MachinePool).Spec.Replicas = ptr.To[int32](3)
			})
			w.update(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: "m-0-bootstrap"}}, func(o client.Object) {
				o.(*corev1.Secret).Data["value"] = []byte("#cloud-config\nrotated")
			})
			w.setPodCIDR("10.244.0.0/16")
			w.eventually(2*time.Minute, "the pool re-applied with 3 replicas", func() (bool, error) {
				w.get(tmp)
				return len(tmp.Spec.ProviderIDList) == 3 && ptr.Deref(tmp.Status.Replicas, 0) == 3, nil
			})
			// The new network replaces a resource: the destructive guard
			// stops the cluster's apply before it, with a plan to approve.
			plan := w.waitBlocked(tc)
			if !slices.Contains(plan.Spec.Summary.Resources, "module.role.terraform_data.network (replace)") || plan.Spec.Summary.Replace < 1 {
				t.Errorf("TerraformPlan summary %+v does not name the replaced network", plan.Spec.Summary)
			}
			if n := w.succeeded(state.KindCluster, tc.Name, "apply"); n != 1 {
				t.Errorf("%d successful cluster applies before the approval, want 1: the blocked apply changed nothing", n)
			}
			w.approve(plan)
			w.eventually(2*time.Minute, "the cluster re-applied its new cluster network", func() (bool, error) {
				return w.succeeded(state.KindCluster, tc.Name, "apply") == 2, nil
			})
			w.eventually(time.Minute, "the plan applied", func() (bool, error) {
				w.get(plan)
				return plan.Labels[infrav1.PlanPhaseLabel] == string(infrav1.PlanPhaseApplied), nil
			})
			w.waitEvent(tc.Name, "PlanApplied")
			if n := len(w.jobsOf(state.KindMachine, tm.Name, "apply")); n != 1 {
				t.Errorf("the machine has %d apply Jobs after its bootstrap data changed, want 1: a machine never re-applies", n)
			}

			// Deletion, as Cluster API does it: the Machine first, then
			// its TerraformMachine; destroy runs, then the finalizer goes
			// and nothing is left behind.
			if err := env.Client.Delete(t.Context(), &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: tm.Name}}); err != nil {
				t.Fatal(err)
			}
			for _, obj := range []client.Object{tm, tmp, tc} {
				if err := env.Client.Delete(t.Context(), obj); err != nil {
					t.Fatal(err)
				}
			}
			for _, obj := range []client.Object{tm, tmp, tc} {
				w.eventually(3*time.Minute, obj.GetName()+" destroyed and gone", func() (bool, error) {
					err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(obj), obj)
					return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
				})
			}
			for _, prefix := range []string{"captf-c-demo-destroy-", "captf-m-m-0-destroy-", "captf-mp-pool-destroy-"} {
				if !slices.ContainsFunc(k.Runs(), func(r kubelet.Run) bool {
					return r.Namespace == w.ns && strings.HasPrefix(r.Job, prefix) && r.ExitCode == 0
				}) {
					t.Errorf("no successful destroy Job %s* ran before the object went", prefix)
				}
			}
			w.wantNothingLeft()
			if n, err := metricSeries(metrics.Ready, w.ns); err != nil || n != 0 {
				t.Errorf("captf_ready keeps %d series of deleted objects (%v)", n, err)
			}
			if sc.versions == 0 {
				t.Error("the status checker saw no status")
			}
		})
	}
}

// succeeded counts the object's Jobs of op recorded as succeeded runs by
// the kubelet.
func (w *world) succeeded(kind, name, op string) int {
	n := 0
	for _, j := range w.jobsOf(kind, name, op) {
		if j.Status.Succeeded > 0 {
			n++
		}
	}
	return n
}

// update reads obj, changes it and writes it, reading again when the
// manager wrote it meanwhile (a conflict), as kubectl edit would.
func (w *world) update(obj client.Object, change func(client.Object)) {
	w.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		w.get(obj)
		change(obj)
		return env.Client.Update(w.t.Context(), obj)
	})
	if err != nil {
		w.t.Fatalf("updating %s: %v", obj.GetName(), err)
	}
}

// annotate adds an annotation to obj, keeping the others.
func (w *world) annotate(obj client.Object, key, value string) {
	w.t.Helper()
	w.update(obj, func(o client.Object) {
		ann := o.GetAnnotations()
		if ann == nil {
			ann = map[string]string{}
		}
		ann[key] = value
		o.SetAnnotations(ann)
	})
}

// wantConditions checks condition reasons.
func wantConditions(t *testing.T, obj client.Object, want map[string]string) {
	t.Helper()
	for typ, reason := range want {
		c := conditionOf(obj, typ)
		if c == nil || c.Reason != reason {
			t.Errorf("%s condition %s = %+v, want reason %s", obj.GetName(), typ, c, reason)
		}
		if c != nil {
			noSecretsIn(t, "condition "+typ, c.Message)
		}
	}
}

// wantStateAdopted checks the base state Secret carries the inputs hash
// and every state Secret is owned by the object.
func (w *world) wantStateAdopted(kind string, obj client.Object) {
	w.t.Helper()
	suffix, err := state.Suffix(w.ns, kind, obj.GetName())
	if err != nil {
		w.t.Fatal(err)
	}
	var list corev1.SecretList
	if err := env.Client.List(w.t.Context(), &list, client.InNamespace(w.ns), client.MatchingLabelsSelector{Selector: state.Selector(suffix)}); err != nil {
		w.t.Fatal(err)
	}
	if len(list.Items) == 0 {
		w.t.Fatalf("%s has no state Secret", obj.GetName())
	}
	for _, s := range list.Items {
		if s.Name == state.SecretName(suffix) && !strings.HasPrefix(s.Annotations[infrav1.InputsHashAnnotation], "h3:") {
			w.t.Errorf("state Secret %s lacks the inputs hash", s.Name)
		}
		if !metav1.IsControlledBy(&s, obj) && !slices.ContainsFunc(s.OwnerReferences, func(r metav1.OwnerReference) bool { return r.UID == obj.GetUID() }) {
			w.t.Errorf("state Secret %s is not owned by %s", s.Name, obj.GetName())
		}
		if !slices.Contains(s.Finalizers, infrav1.StateProtectionFinalizer) {
			w.t.Errorf("state Secret %s lacks %s: a foreground deletion would take it before the destroy", s.Name, infrav1.StateProtectionFinalizer)
		}
	}
}

// wantNothingLeft checks that the namespace holds no CAPTF Secret,
// Lease or Job once every object is gone.
func (w *world) wantNothingLeft() {
	w.t.Helper()
	w.eventually(time.Minute, "the garbage collector removed the Jobs", func() (bool, error) {
		return len(w.jobsOf(state.KindCluster, w.cluster, ""))+len(w.jobsOf(state.KindMachine, "m-0", ""))+len(w.jobsOf(state.KindMachinePool, "pool", "")) == 0, nil
	})
	var secrets corev1.SecretList
	if err := env.Client.List(w.t.Context(), &secrets, client.InNamespace(w.ns)); err != nil {
		w.t.Fatal(err)
	}
	for _, s := range secrets.Items {
		if s.Labels[infrav1.ManagedLabel] == "true" || s.Labels[state.LabelState] == "true" {
			w.t.Errorf("Secret %s is left behind", s.Name)
		}
	}
	var leases coordinationv1.LeaseList
	if err := env.Client.List(w.t.Context(), &leases, client.InNamespace(w.ns)); err != nil {
		w.t.Fatal(err)
	}
	for _, l := range leases.Items {
		w.t.Errorf("Lease %s is left behind", l.Name)
	}
}

// metricSeries counts a vector's series of a namespace.
func metricSeries(c prometheus.Collector, ns string) (int, error) {
	ch := make(chan prometheus.Metric, 1000)
	c.Collect(ch)
	close(ch)
	n := 0
	for m := range ch {
		var pb dto.Metric
		if err := m.Write(&pb); err != nil {
			return 0, err
		}
		for _, l := range pb.GetLabel() {
			if l.GetName() == "namespace" && l.GetValue() == ns {
				n++
			}
		}
	}
	return n, nil
}
