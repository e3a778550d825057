package workload

import (
	"context"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/roles"
	"captf.io/captf/internal/workspace"
	"captf.io/captf/pkg/state"
)

// WatchFilterLabel is Cluster API's label that --watch-filter selects on.
const WatchFilterLabel = "cluster.x-k8s.io/watch-filter"

// Reconciler reconciles one workload kind.
type Reconciler struct {
	Role   roles.Role
	Engine *workspace.Engine
}

// Reconcile implements reconcile.Reconciler.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	return r.Engine.Reconcile(ctx, r.Role, req.NamespacedName)
}

// Setup is what every kind's controller shares: the kind, its Jobs, and
// the concurrency.
func (r *Reconciler) builder(mgr ctrl.Manager, name string, concurrency int, watchFilter string) *builder.Builder {
	return ctrl.NewControllerManagedBy(mgr).
		For(r.Role.New(), builder.WithPredicates(watchFilterPredicate(watchFilter))).
		Owns(&batchv1.Job{}).
		Watches(&batchv1.Job{}, handler.EnqueueRequestsFromMapFunc(unownedJobToObject(r.Role.Kind()))).
		Owns(&infrav1.TerraformPlan{}).
		Named(name).
		WithOptions(controller.Options{MaxConcurrentReconciles: max(concurrency, 1)})
}

// unownedJobToObject maps a Job of kind's objects that has no owner
// reference (one started while its object was being deleted) to its
// object, named by the Job's captf.io/owner annotation.
func unownedJobToObject(kind string) handler.MapFunc {
	kindLabel := state.OwnerLabels(kind, "", "")[state.LabelOwnerKind]
	return func(_ context.Context, o client.Object) []reconcile.Request {
		name := o.GetAnnotations()[infrav1.OwnerAnnotation]
		if metav1.GetControllerOf(o) != nil || o.GetLabels()[infrav1.OwnerKindLabel] != kindLabel || name == "" {
			return nil
		}
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: o.GetNamespace(), Name: name}}}
	}
}

// requests turns objects into reconcile requests.
func requests(objs ...client.Object) []reconcile.Request {
	out := make([]reconcile.Request, 0, len(objs))
	for _, o := range objs {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(o)})
	}
	return out
}

// watchFilterPredicate admits every object when value is empty, else only
// those labelled cluster.x-k8s.io/watch-filter=<value>.
func watchFilterPredicate(value string) predicate.Predicate {
	return predicate.NewPredicateFuncs(func(o client.Object) bool {
		return value == "" || o.GetLabels()[WatchFilterLabel] == value
	})
}
