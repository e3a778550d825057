package state

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
)

// Lister lists Secrets of a namespace by label. Read needs nothing more, so
// any client can serve; it must read live data, not a cache, because the
// manager caches only Secret metadata.
type Lister interface {
	List(ctx context.Context, namespace string, selector labels.Selector) ([]corev1.Secret, error)
}

// ListerFunc adapts a function to Lister.
type ListerFunc func(ctx context.Context, namespace string, selector labels.Selector) ([]corev1.Secret, error)

// List calls f.
func (f ListerFunc) List(ctx context.Context, namespace string, selector labels.Selector) ([]corev1.Secret, error) {
	return f(ctx, namespace, selector)
}

// ClientsetLister lists through client-go (a clientset's CoreV1()), straight from the
// API server. It stops after MaxChunks+1 Secrets: that is enough for Decode
// to tell a state with too many chunks, and it bounds the memory a runaway
// number of 1 MiB Secrets could take.
func ClientsetLister(c corev1client.SecretsGetter) Lister {
	return ListerFunc(func(ctx context.Context, namespace string, selector labels.Selector) ([]corev1.Secret, error) {
		var items []corev1.Secret
		opts := metav1.ListOptions{LabelSelector: selector.String()}
		for {
			// The server may return fewer items than asked for and a
			// continue token, so page until enough or none are left.
			opts.Limit = int64(MaxChunks + 1 - len(items))
			list, err := c.Secrets(namespace).List(ctx, opts)
			if err != nil {
				return nil, err
			}
			items = append(items, list.Items...)
			if list.Continue == "" || len(items) > MaxChunks {
				return items, nil
			}
			opts.Continue = list.Continue
		}
	})
}

// Read lists the state Secrets of suffix in namespace and decodes them. A
// failed List is returned wrapped, not as an *Error: it says nothing about
// the state and is worth retrying.
func Read(ctx context.Context, l Lister, namespace, suffix string) (*State, error) {
	secrets, err := l.List(ctx, namespace, Selector(suffix))
	if err != nil {
		return nil, fmt.Errorf("listing state Secrets %s: %w", SecretName(suffix), err)
	}
	return Decode(suffix, secrets)
}
