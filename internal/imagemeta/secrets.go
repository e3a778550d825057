package imagemeta

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ReadPullSecrets reads, through r, the image pull Secrets refs names in
// namespace ns, for WithPullSecrets; one that does not exist is skipped
// (the image may be public).
func ReadPullSecrets(ctx context.Context, r client.Reader, ns string, refs []corev1.LocalObjectReference) ([]corev1.Secret, error) {
	var out []corev1.Secret
	for _, ref := range refs {
		s := &corev1.Secret{}
		err := r.Get(ctx, client.ObjectKey{Namespace: ns, Name: ref.Name}, s)
		if client.IgnoreNotFound(err) != nil {
			return nil, fmt.Errorf("reading image pull Secret %s: %w", ref.Name, err)
		}
		if err == nil {
			out = append(out, *s)
		}
	}
	return out, nil
}
