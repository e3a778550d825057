package workload

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/readset"
	"captf.io/captf/internal/roles"
	"captf.io/captf/internal/workspace"
)

// The kinds a variablesFrom entry can name.
const (
	kindConfigMap = "ConfigMap"
	kindSecret    = "Secret"
)

// sourcesCache watches the metadata of the ConfigMaps and Secrets labelled
// captf.io/variables=true, and nothing else: their data is read live by
// the pass, and an unlabelled one is "missing" anyway (its label's removal
// arrives as a delete). It is a cache of its own because the manager's
// Secret cache selects the credentials mirrors only.
func sourcesCache(mgr ctrl.Manager, namespace string) (cache.Cache, error) {
	labelled := labels.SelectorFromSet(labels.Set{infrav1.VariablesLabel: "true"})
	opts := cache.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper(), ByObject: map[client.Object]cache.ByObject{
		sourceMeta(kindConfigMap): {Label: labelled, Transform: readset.KeepIdentity},
		sourceMeta(kindSecret):    {Label: labelled, Transform: readset.KeepIdentity},
	}}
	if namespace != "" {
		opts.DefaultNamespaces = map[string]cache.Config{namespace: {}}
	}
	c, err := cache.New(mgr.GetConfig(), opts)
	if err != nil {
		return nil, fmt.Errorf("creating the variables sources cache: %w", err)
	}
	return c, mgr.Add(c)
}

func sourceMeta(kind string) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: kind}}
}

// sourceWatches are the watches that wake, at once, the objects of the
// shard's kind whose spec.variablesFrom names a labelled source that
// changed, appeared, or lost its label or went away. Each woken object's
// last settled pass is forgotten first: its record would be replayed
// against another informer than this one, which may not have the change
// yet.
func sourceWatches(c cache.Cache, s shard, list client.ObjectList, engine *workspace.Engine) []source.Source {
	var out []source.Source
	for _, kind := range []string{kindConfigMap, kindSecret} {
		users := sourceUsers(s.reader, s.role, list, kind)
		out = append(out, source.Kind(c, sourceMeta(kind),
			handler.TypedEnqueueRequestsFromMapFunc(func(ctx context.Context, src *metav1.PartialObjectMetadata) []reconcile.Request {
				woken := s.keep(ctx, users(ctx, src))
				for _, r := range woken {
					engine.Forget(s.role, r.NamespacedName)
				}
				return woken
			}),
			predicate.TypedResourceVersionChangedPredicate[*metav1.PartialObjectMetadata]{}))
	}
	return out
}

// sourceUsers maps a variables source of kind to the objects of its
// namespace that name it in spec.variablesFrom.
func sourceUsers(r client.Reader, role roles.Role, list client.ObjectList, kind string) handler.TypedMapFunc[*metav1.PartialObjectMetadata, reconcile.Request] {
	return func(ctx context.Context, src *metav1.PartialObjectMetadata) []reconcile.Request {
		l := list.DeepCopyObject().(client.ObjectList)
		if err := r.List(ctx, l, client.InNamespace(src.Namespace)); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "Listing the users of a variables source", "kind", kind, "source", client.ObjectKeyFromObject(src))
			return nil
		}
		var users []client.Object
		_ = meta.EachListItem(l, func(item runtime.Object) error {
			obj := item.(client.Object)
			for _, ref := range role.View(obj).VariablesFrom {
				if (kind == kindConfigMap && ref.ConfigMapRef != nil && ref.ConfigMapRef.Name == src.Name) ||
					(kind == kindSecret && ref.SecretRef != nil && ref.SecretRef.Name == src.Name) {
					users = append(users, obj)
					break
				}
			}
			return nil
		})
		return requests(users...)
	}
}
