package imagemeta_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"captf.io/captf/internal/imagemeta"
	"captf.io/captf/internal/test/registrytest"
)

// The labels come from a real registry (the distribution API of
// go-containerregistry's registry), by tag and by digest; an image the
// registry lacks is ErrUnknownImage.
func TestRegistryLabels(t *testing.T) {
	host := registrytest.Start(t)
	want := map[string]string{imagemeta.LabelRuntime: imagemeta.RuntimeTofu, imagemeta.LabelRole: "cluster"}
	ref := registrytest.Push(t, host+"/captf/noop-cluster:tofu", want)
	r := imagemeta.Registry{}
	got, err := r.Labels(t.Context(), ref)
	if err != nil || got[imagemeta.LabelRuntime] != "tofu" || got[imagemeta.LabelRole] != "cluster" {
		t.Fatalf("labels of %s: %v, %v", ref, got, err)
	}
	d, err := remote.Head(registrytest.Ref(t, ref))
	if err != nil {
		t.Fatal(err)
	}
	byDigest := host + "/captf/noop-cluster@" + d.Digest.String()
	if got, err := r.Labels(t.Context(), byDigest); err != nil || got[imagemeta.LabelRuntime] != "tofu" {
		t.Fatalf("labels of %s: %v, %v", byDigest, got, err)
	}
	if _, err := r.Labels(t.Context(), host+"/captf/missing:tofu"); !errors.Is(err, imagemeta.ErrUnknownImage) {
		t.Fatalf("a missing image: %v, want ErrUnknownImage", err)
	}
	if _, err := r.Labels(t.Context(), "Not A Reference"); err == nil {
		t.Fatal("an invalid reference was read")
	}
}

// Answers are kept for the TTL, failures for a tenth of it; a caller that
// gave up teaches the cache nothing.
func TestCached(t *testing.T) {
	var calls atomic.Int32
	fail := true
	inner := imagemeta.Func(func(ctx context.Context, ref string) (map[string]string, error) {
		calls.Add(1)
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if fail {
			return nil, errors.New("registry down")
		}
		return map[string]string{imagemeta.LabelRuntime: ref}, nil
	})
	now := time.Unix(0, 0)
	c := &imagemeta.Cached{Reader: inner, TTL: time.Minute, Now: func() time.Time { return now }}
	for range 2 {
		if _, err := c.Labels(t.Context(), "a"); err == nil {
			t.Fatal("the failure was not returned")
		}
	}
	if calls.Load() != 1 {
		t.Fatalf("%d calls for a failure asked twice within its 6 s", calls.Load())
	}
	fail, now = false, now.Add(7*time.Second)
	for range 2 {
		if got, err := c.Labels(t.Context(), "a"); err != nil || got[imagemeta.LabelRuntime] != "a" {
			t.Fatalf("labels %v, %v", got, err)
		}
	}
	if calls.Load() != 2 {
		t.Fatalf("%d calls; want the success kept", calls.Load())
	}
	now = now.Add(2 * time.Minute)
	if _, err := c.Labels(t.Context(), "a"); err != nil || calls.Load() != 3 {
		t.Fatalf("an expired answer was kept: %d calls, %v", calls.Load(), err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := c.Labels(ctx, "b"); err == nil {
		t.Fatal("a cancelled read succeeded")
	}
	if _, err := c.Labels(t.Context(), "b"); err != nil {
		t.Fatalf("a cancelled read was kept as the answer: %v", err)
	}
}

// An index without the manager's platform answers with its first linux
// image; with it, with that one.
func TestRegistryIndex(t *testing.T) {
	host := registrytest.Start(t)
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, p := range []v1.Platform{{OS: "windows", Architecture: "amd64"}, {OS: "linux", Architecture: "s390x"}, {OS: "linux", Architecture: "arm64"}} {
		img := registrytest.Image(t, map[string]string{"arch": p.OS + "/" + p.Architecture})
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &p}})
	}
	ref := host + "/captf/multi:1"
	if err := remote.WriteIndex(registrytest.Ref(t, ref), idx); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ arch, want string }{{"arm64", "linux/arm64"}, {"amd64", "linux/s390x"}} {
		got, err := imagemeta.Registry{Platform: &v1.Platform{OS: "linux", Architecture: tc.arch}}.Labels(t.Context(), ref)
		if err != nil || got["arch"] != tc.want {
			t.Errorf("for %s: labels %v, %v; want those of %s", tc.arch, got, err, tc.want)
		}
	}
}

// A registry cannot make the manager hold a config larger than 1 MiB.
func TestRegistryCapsTheConfig(t *testing.T) {
	host := registrytest.Start(t)
	ref := registrytest.Push(t, host+"/captf/huge:1", map[string]string{"io.captf.variables-schema": strings.Repeat("x", 2<<20)})
	if _, err := (imagemeta.Registry{}).Labels(t.Context(), ref); err == nil || !strings.Contains(err.Error(), "more than the 1048576") {
		t.Fatalf("a 2 MiB config was read: %v", err)
	}
}
