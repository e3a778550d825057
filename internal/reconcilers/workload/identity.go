package workload

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/roles"
)

// specChanged lets through an identity's spec changes (its generation)
// and its readiness (its Ready condition's status or reason: its source
// Secret created, deleted or completed), not the rest of its status (the
// namespaces the identity controller lists), which changes often.
var specChanged = builder.WithPredicates(predicate.Or[client.Object](predicate.GenerationChangedPredicate{}, predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool { return readiness(e.ObjectOld) != readiness(e.ObjectNew) },
}))

// readiness is an identity's Ready condition, as status/reason.
func readiness(o client.Object) string {
	id, ok := o.(*infrav1.TerraformClusterIdentity)
	if !ok {
		return ""
	}
	c := meta.FindStatusCondition(id.Status.Conditions, infrav1.ReadyCondition)
	if c == nil {
		return ""
	}
	return string(c.Status) + "/" + c.Reason
}

// identityUsers maps a TerraformClusterIdentity whose spec changed (a
// namespace no longer allowed, another Secret) to every object of role's
// kind that uses it, at once rather than at its next requeue: those that
// name it in spec.identityRef and, for machines and pools that name none,
// those whose TerraformCluster's spec.defaults.identityRef names it.
func identityUsers(r client.Reader, role roles.Role, list client.ObjectList) handler.MapFunc {
	return func(ctx context.Context, identity client.Object) []reconcile.Request {
		names := func(ref *infrav1.IdentityReference) bool {
			return ref != nil && ref.Name == identity.GetName() && ref.Kind != infrav1.IdentityKindSecret
		}
		// The clusters (namespace/name) whose defaults hand it down.
		inherited := map[client.ObjectKey]bool{}
		if _, isCluster := role.(roles.Cluster); !isCluster {
			var tcs infrav1.TerraformClusterList
			if err := r.List(ctx, &tcs); err != nil {
				return nil
			}
			for i := range tcs.Items {
				if d := tcs.Items[i].Spec.Defaults; d != nil && names(d.IdentityRef) {
					inherited[client.ObjectKey{Namespace: tcs.Items[i].Namespace, Name: roles.ClusterNameOf(&tcs.Items[i])}] = true
				}
			}
		}
		l := list.DeepCopyObject().(client.ObjectList)
		if err := r.List(ctx, l); err != nil {
			return nil
		}
		var users []client.Object
		_ = meta.EachListItem(l, func(item runtime.Object) error {
			obj := item.(client.Object)
			ref := role.View(obj).IdentityRef
			cluster := client.ObjectKey{Namespace: obj.GetNamespace(), Name: obj.GetLabels()[infrav1.ClusterNameLabel]}
			if names(ref) || (ref == nil && inherited[cluster]) {
				users = append(users, obj)
			}
			return nil
		})
		return requests(users...)
	}
}
