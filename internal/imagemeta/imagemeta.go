package imagemeta

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// The labels of the image contract this package's callers read.
const (
	// LabelRuntime is the runtime the image runs: RuntimeTofu or
	// RuntimeTerraform.
	LabelRuntime = "io.captf.runtime"
	// LabelRuntimeVersion is that runtime's version.
	LabelRuntimeVersion = "io.captf.runtime.version"
	// LabelRole is the module's role: cluster, machine or machinepool.
	LabelRole = "io.captf.role"
	// LabelContract is the module contract version, such as v1alpha1.
	LabelContract = "io.captf.contract"
)

// Runtimes LabelRuntime names.
const (
	RuntimeTofu      = "tofu"
	RuntimeTerraform = "terraform"
)

// ErrUnknownImage is the error of a reference no source knows.
var ErrUnknownImage = errors.New("image not found")

// Reader returns the config labels of an image reference (nil when it has
// none).
type Reader interface {
	Labels(ctx context.Context, ref string) (map[string]string, error)
}

// Func is a Reader made of a function.
type Func func(ctx context.Context, ref string) (map[string]string, error)

// Labels calls f.
func (f Func) Labels(ctx context.Context, ref string) (map[string]string, error) { return f(ctx, ref) }

// Registry reads labels from the image's registry: its manifest (the
// platform's, for an index) and its config blob, never its layers.
type Registry struct {
	// Keychain authenticates to registries; anonymous when nil.
	Keychain authn.Keychain
	// Platform picks the image of an index; the manager's own when empty.
	Platform *v1.Platform
}

// Labels reads ref's config labels: of the image, or of an index's image
// for the platform (else its first linux image). The image pull Secrets
// of ctx (WithPullSecrets) authenticate first.
func (r Registry) Labels(ctx context.Context, ref string) (map[string]string, error) {
	parsed, err := name.ParseReference(ref)
	if err != nil {
		return nil, fmt.Errorf("image reference %q: %w", ref, err)
	}
	kc := r.Keychain
	if kc == nil {
		kc = authn.NewMultiKeychain()
	}
	if pull, ok := ctx.Value(pullSecretsKey{}).(pullKeychain); ok {
		kc = authn.NewMultiKeychain(pull, kc)
	}
	platform := v1.Platform{OS: "linux", Architecture: runtime.GOARCH}
	if r.Platform != nil {
		platform = *r.Platform
	}
	desc, err := remote.Get(parsed, remote.WithContext(ctx), remote.WithAuthFromKeychain(kc), remote.WithTransport(capped{next: remote.DefaultTransport}))
	if err != nil {
		var terr *transport.Error
		if errors.As(err, &terr) && terr.StatusCode == http.StatusNotFound {
			return nil, fmt.Errorf("%w: %s: %w", ErrUnknownImage, ref, err)
		}
		return nil, fmt.Errorf("reading image %s from its registry: %w", ref, err)
	}
	img, err := pick(desc, platform)
	if err != nil {
		return nil, fmt.Errorf("reading image %s: %w", ref, err)
	}
	m, err := img.Manifest()
	if err != nil {
		return nil, fmt.Errorf("reading the manifest of image %s: %w", ref, err)
	}
	if m.Config.Size > maxConfig {
		return nil, fmt.Errorf("the config of image %s declares %d bytes, more than the %d its labels may take", ref, m.Config.Size, maxConfig)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("reading the config of image %s: %w", ref, err)
	}
	return cfg.Config.Labels, nil
}

// pick is desc's image: itself, or for an index the image of platform,
// else its first linux image.
func pick(desc *remote.Descriptor, platform v1.Platform) (v1.Image, error) {
	if !desc.MediaType.IsIndex() {
		return desc.Image()
	}
	idx, err := desc.ImageIndex()
	if err != nil {
		return nil, err
	}
	m, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	var linux *v1.Descriptor
	for i := range m.Manifests {
		d := &m.Manifests[i]
		if d.Platform == nil || d.Platform.OS != "linux" {
			continue
		}
		if d.Platform.Architecture == platform.Architecture && (platform.Variant == "" || d.Platform.Variant == platform.Variant) {
			return idx.Image(d.Digest)
		}
		if linux == nil {
			linux = d
		}
	}
	if linux == nil {
		return nil, errors.New("the index has no linux image")
	}
	return idx.Image(linux.Digest)
}

// Cached keeps the answers of a Reader: a success for TTL, a failure for
// a tenth of it (at least a second), so that a registry is not asked on
// every admission or reconcile.
type Cached struct {
	Reader Reader
	TTL    time.Duration
	// Now is the clock (time.Now when nil).
	Now func() time.Time

	mu      sync.Mutex
	answers map[string]answer
}

type answer struct {
	labels  map[string]string
	err     error
	expires time.Time
}

// maxCached bounds the answers kept; past it, expired ones go first and
// then all of them.
const maxCached = 1024

// Labels answers from the cache, or asks the Reader.
func (c *Cached) Labels(ctx context.Context, ref string) (map[string]string, error) {
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	key := ref
	if pull, ok := ctx.Value(pullSecretsKey{}).(pullKeychain); ok {
		key += "|" + pull.fingerprint()
	}
	c.mu.Lock()
	a, ok := c.answers[key]
	c.mu.Unlock()
	if ok && now().Before(a.expires) {
		return a.labels, a.err
	}
	labels, err := c.Reader.Labels(ctx, ref)
	ttl := c.TTL
	if err != nil {
		ttl = max(ttl/10, time.Second)
		if ctx.Err() != nil {
			return labels, err // the caller gave up: nothing learnt
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.answers == nil {
		c.answers = map[string]answer{}
	}
	if len(c.answers) >= maxCached {
		for k, v := range c.answers {
			if !now().Before(v.expires) {
				delete(c.answers, k)
			}
		}
		if len(c.answers) >= maxCached {
			clear(c.answers)
		}
	}
	c.answers[key] = answer{labels: labels, err: err, expires: now().Add(ttl)}
	return labels, err
}
