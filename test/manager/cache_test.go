package manager_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
)

// TestSecretCacheHoldsOnlyMirrors: of Secrets, the manager's cache (the
// one its controllers watch) holds only the metadata of credentials
// mirrors. The replay of settled passes has a cache of its own, of every
// Secret's name, labels and resourceVersion (internal/readset).
func TestSecretCacheHoldsOnlyMirrors(t *testing.T) {
	startManager(t)
	ctx := context.Background()
	ns := "cache-scope"
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	for _, s := range []*corev1.Secret{
		{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "user-secret"}, StringData: map[string]string{"k": "v"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "captf-mirror", Labels: map[string]string{infrav1.MirroredLabel: "true"}}, StringData: map[string]string{"k": "v"}},
	} {
		if err := env.Client.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	var names []string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("SecretList"))
		if err := managerCache.List(ctx, list, client.InNamespace(ns)); err != nil {
			return false, err
		}
		names = names[:0]
		for _, m := range list.Items {
			names = append(names, m.Name)
		}
		return len(names) > 0, nil
	})
	if err != nil {
		t.Fatalf("the mirror never reached the manager's cache: %v", err)
	}
	if len(names) != 1 || names[0] != "captf-mirror" {
		t.Errorf("the manager caches the metadata of Secrets %v, want only the mirror captf-mirror", names)
	}
}
