package checkpoint_test

import (
	"bytes"
	"crypto/rand"
	"errors"
	"os"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"captf.io/captf/internal/checkpoint"
	"captf.io/captf/internal/test/envtest"
)

var env *envtest.Env

func TestMain(m *testing.M) { os.Exit(envtest.Main(m, &env, envtest.Options{})) }

func newStore(t *testing.T) checkpoint.Store {
	t.Helper()
	envtest.Require(t, env)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "checkpoint-"}}
	if err := env.Client.Create(t.Context(), ns); err != nil {
		t.Fatal(err)
	}
	return checkpoint.Store{Client: env.Client, Reader: env.Client, Namespace: ns.Name, Name: "memo", Fingerprint: "build-1"}
}

func secrets(t *testing.T, s checkpoint.Store) []corev1.Secret {
	t.Helper()
	var list corev1.SecretList
	if err := env.Client.List(t.Context(), &list, client.InNamespace(s.Namespace)); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// TestACheckpointComesBackWhole: what a manager saved, the next one (same
// build, same configuration) loads byte for byte, across as many Secrets
// as it takes; a smaller save leaves no Secret of a larger one behind.
func TestACheckpointComesBackWhole(t *testing.T) {
	s := newStore(t)
	ctx := t.Context()
	if _, err := s.Load(ctx); !errors.Is(err, checkpoint.ErrUnusable) {
		t.Fatalf("loading before any save: %v, want ErrUnusable", err)
	}
	big := make([]byte, 2*checkpoint.ChunkBytes+1000) // random: gzip cannot shrink it
	if _, err := rand.Read(big); err != nil {
		t.Fatal(err)
	}
	if err := s.Save(ctx, big); err != nil {
		t.Fatal(err)
	}
	if n := len(secrets(t, s)); n != 3 {
		t.Errorf("a %d-byte checkpoint took %d Secrets, want 3", len(big), n)
	}
	got, err := s.Load(ctx)
	if err != nil || !bytes.Equal(got, big) {
		t.Fatalf("loaded %d bytes (%v), want the %d saved", len(got), err, len(big))
	}
	small := []byte(strings.Repeat(`{"key":"TerraformMachine/ns/m"}`, 1000))
	if err := s.Save(ctx, small); err != nil {
		t.Fatal(err)
	}
	if left := secrets(t, s); len(left) != 1 || left[0].Name != "captf-checkpoint-memo-0" {
		t.Errorf("after a smaller save the namespace holds %d Secrets, want only captf-checkpoint-memo-0", len(left))
	}
	if got, err := s.Load(ctx); err != nil || !bytes.Equal(got, small) {
		t.Fatalf("loaded %q (%v), want the smaller save", got, err)
	}
}

// TestAnUnusableCheckpointIsRefused: a checkpoint another build or
// configuration wrote, one a save cut in the middle left, or one that
// does not decompress, is refused as a whole, saying why.
func TestAnUnusableCheckpointIsRefused(t *testing.T) {
	big := make([]byte, checkpoint.ChunkBytes+1000)
	if _, err := rand.Read(big); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, why string
		spoil     func(t *testing.T, s *checkpoint.Store)
	}{
		{name: "another build", why: "another build", spoil: func(_ *testing.T, s *checkpoint.Store) { s.Fingerprint = "build-2" }},
		{name: "a save cut in the middle", why: "two saves", spoil: func(t *testing.T, s *checkpoint.Store) {
			c := &corev1.Secret{}
			if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: s.Namespace, Name: "captf-checkpoint-memo-1"}, c); err != nil {
				t.Fatal(err)
			}
			c.Annotations[checkpoint.GenerationAnnotation] = "older"
			if err := env.Client.Update(t.Context(), c); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "a chunk gone", why: "1 of 2 chunks saved", spoil: func(t *testing.T, s *checkpoint.Store) {
			if err := env.Client.Delete(t.Context(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: "captf-checkpoint-memo-1"}}); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "corrupt", why: "gzip", spoil: func(t *testing.T, s *checkpoint.Store) {
			c := &corev1.Secret{}
			if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: s.Namespace, Name: "captf-checkpoint-memo-0"}, c); err != nil {
				t.Fatal(err)
			}
			c.Data[checkpoint.DataKey] = []byte("not gzip")
			if err := env.Client.Update(t.Context(), c); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newStore(t)
			if err := s.Save(t.Context(), big); err != nil {
				t.Fatal(err)
			}
			tc.spoil(t, &s)
			got, err := s.Load(t.Context())
			if !errors.Is(err, checkpoint.ErrUnusable) || !strings.Contains(err.Error(), tc.why) {
				t.Errorf("Load: %v, want ErrUnusable saying %q", err, tc.why)
			}
			if got != nil {
				t.Errorf("Load returned %d bytes of an unusable checkpoint", len(got))
			}
		})
	}
}
