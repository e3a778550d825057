package inputs

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
)

// ReadSources reads, through r (live: the manager caches no such object),
// the ConfigMaps and Secrets of namespace ns that refs name, in order, for
// MergeVariables; one that does not exist is a Source not Found.
func ReadSources(ctx context.Context, r client.Reader, ns string, refs []infrav1.VariablesFromSource) ([]Source, error) {
	sources := make([]Source, 0, len(refs))
	for _, ref := range refs {
		key := client.ObjectKey{Namespace: ns}
		switch {
		case ref.ConfigMapRef != nil:
			key.Name = ref.ConfigMapRef.Name
			cm := &corev1.ConfigMap{}
			if err := r.Get(ctx, key, cm); err != nil {
				if !apierrors.IsNotFound(err) {
					return nil, err
				}
				cm = nil
			}
			sources = append(sources, SourceFromConfigMap(ref, cm))
		case ref.SecretRef != nil:
			key.Name = ref.SecretRef.Name
			s := &corev1.Secret{}
			if err := r.Get(ctx, key, s); err != nil {
				if !apierrors.IsNotFound(err) {
					return nil, err
				}
				s = nil
			}
			sources = append(sources, SourceFromSecret(ref, s))
		}
	}
	return sources, nil
}
