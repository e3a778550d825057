package workload

import (
	"context"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/roles"
	"captf.io/captf/internal/workspace"
)

// Reconciler reconciles one workload kind.
type Reconciler struct {
	Role   roles.Role
	Engine *workspace.Engine
}

// Reconcile implements reconcile.Reconciler.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	return r.Engine.Reconcile(ctx, r.Role, req.NamespacedName)
}

// builder is what every kind's controller shares: the kind, its Jobs,
// their pods and plans, the objects of the kind (list) waiting at a gate
// a finished Job may have held, and the concurrency; every watch goes
// through the shard.
func (r *Reconciler) builder(mgr ctrl.Manager, name string, concurrency int, s shard, list client.ObjectList) *builder.Builder {
	return ctrl.NewControllerManagedBy(mgr).
		For(r.Role.New(), builder.WithPredicates(s.own(r.Engine))).
		Watches(&batchv1.Job{}, s.mapped(s.jobToObject), builder.WithPredicates(jobRead, ownJobs(r.Engine, r.Role.Kind()))).
		Watches(&corev1.Pod{}, s.mapped(s.podToObject), builder.WithPredicates(podPull)).
		Watches(&batchv1.Job{}, s.mapped(gateWaiters(s.reader, list, s.value)), builder.WithPredicates(jobReleased)).
		Watches(&infrav1.TerraformPlan{}, s.mapped(ownerToObject(r.Role.Kind()))).
		Named(name).
		WithOptions(controller.Options{MaxConcurrentReconciles: max(concurrency, 1)})
}
