package imagecheck

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"captf.io/captf/internal/lint"
)

// layoutPrefix starts a reference to an OCI image layout directory.
const layoutPrefix = "oci:"

// source is what a reference names: a single image or an index.
type source struct {
	image     v1.Image
	index     v1.ImageIndex
	digest    v1.Hash
	mediaType types.MediaType
}

// target is one image to check, and its platform.
type target struct {
	img      v1.Image
	digest   v1.Hash
	platform v1.Platform
}

// open reads the manifest or index opts.Ref names, from its registry
// (authenticating with the default keychain) or its layout directory.
func open(ctx context.Context, opts Options) (source, error) {
	if dir, ok := strings.CutPrefix(opts.Ref, layoutPrefix); ok {
		return openLayout(dir, opts.Ref)
	}
	var nameOpts []name.Option
	if opts.Insecure {
		nameOpts = append(nameOpts, name.Insecure)
	}
	ref, err := name.ParseReference(opts.Ref, nameOpts...)
	if err != nil {
		return source{}, lint.Usage("image reference %q: %w: give one such as ghcr.io/org/module:v1, or oci:<dir> for an OCI image layout directory", opts.Ref, err)
	}
	desc, err := remote.Get(ref, remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain))
	if err != nil {
		return source{}, lint.Unreadable("pulling image %s: %w", opts.Ref, err)
	}
	s := source{digest: desc.Digest, mediaType: desc.MediaType}
	if desc.MediaType.IsIndex() {
		s.index, err = desc.ImageIndex()
	} else {
		s.image, err = desc.Image()
	}
	if err != nil {
		return source{}, lint.Unreadable("pulling image %s: %w", opts.Ref, err)
	}
	return s, nil
}

// openLayout reads the layout at dir: the image or index its index holds
// alone, else its index.
func openLayout(dir, ref string) (source, error) {
	if dir == "" {
		return source{}, lint.Usage("image reference %q names no directory: give oci:<dir> for an OCI image layout directory", ref)
	}
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return source{}, lint.Unreadable("reading the OCI image layout %s: %w", dir, err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		return source{}, lint.Unreadable("reading the OCI image layout %s: %w", dir, err)
	}
	if len(m.Manifests) != 1 {
		if len(m.Manifests) == 0 {
			return source{}, lint.Unreadable("the OCI image layout %s holds no image", dir)
		}
		digest, err := idx.Digest()
		if err != nil {
			return source{}, lint.Unreadable("reading the OCI image layout %s: %w", dir, err)
		}
		return source{index: idx, digest: digest, mediaType: types.OCIImageIndex}, nil
	}
	d := m.Manifests[0]
	s := source{digest: d.Digest, mediaType: d.MediaType}
	switch {
	case d.MediaType.IsIndex():
		s.index, err = idx.ImageIndex(d.Digest)
	case d.MediaType.IsImage():
		s.image, err = idx.Image(d.Digest)
	default:
		return source{}, lint.Unreadable("the OCI image layout %s holds a %s, not an image", dir, d.MediaType)
	}
	if err != nil {
		return source{}, lint.Unreadable("reading the OCI image layout %s: %w", dir, err)
	}
	return s, nil
}

// pick chooses the images to check: a single image as it is (a finding
// when it is not for an asked platform), an index's image for want, or
// every image of the index for AllPlatforms.
func pick(src source, opts Options, want v1.Platform, desc *Description) ([]target, []lint.Finding, error) {
	if src.image != nil {
		cfg, err := src.image.ConfigFile()
		if err != nil || cfg == nil {
			return nil, nil, lint.Unreadable("reading the config of image %s: %v", opts.Ref, err)
		}
		t := target{img: src.image, digest: src.digest, platform: v1.Platform{OS: cfg.OS, Architecture: cfg.Architecture, Variant: cfg.Variant}}
		if opts.PlatformSet && !t.platform.Satisfies(want) {
			return []target{t}, []lint.Finding{platformFinding(fmt.Sprintf("the image is for %s, not %s as --platform asks: build it for %s, or lint it with the platform it is for", platformString(t.platform), opts.Platform, opts.Platform))}, nil
		}
		return []target{t}, nil, nil
	}
	all, err := imagesOf(src.index, 0)
	if err != nil {
		return nil, nil, lint.Unreadable("reading the index of image %s: %w", opts.Ref, err)
	}
	for _, t := range all {
		desc.Platforms = append(desc.Platforms, platformString(t.platform))
	}
	if len(all) == 0 {
		return nil, []lint.Finding{platformFinding("the index holds no image for any platform: publish one for linux/amd64 (and linux/arm64)")}, nil
	}
	i := slices.IndexFunc(all, func(t target) bool { return t.platform.Satisfies(want) })
	if opts.AllPlatforms {
		if i < 0 && opts.PlatformSet {
			return all, []lint.Finding{lacking(opts.Platform, desc.Platforms)}, nil
		}
		return all, nil, nil
	}
	if i < 0 {
		return nil, []lint.Finding{lacking(opts.Platform, desc.Platforms)}, nil
	}
	return all[i : i+1], nil, nil
}

func lacking(platform string, has []string) lint.Finding {
	return platformFinding(fmt.Sprintf("the index has no image for %s (it has %s): publish one (build for linux/amd64 and linux/arm64), or pin the nodes' architecture and lint with --platform or --all-platforms", platform, strings.Join(has, ", ")))
}

// imagesOf lists the images of idx (of its nested indexes too), leaving
// out attestations.
func imagesOf(idx v1.ImageIndex, depth int) ([]target, error) {
	m, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	var out []target
	for _, d := range m.Manifests {
		switch {
		case d.MediaType.IsIndex() && depth < 2:
			child, err := idx.ImageIndex(d.Digest)
			if err != nil {
				return nil, err
			}
			more, err := imagesOf(child, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, more...)
		case d.MediaType.IsImage():
			if d.Annotations["vnd.docker.reference.type"] == "attestation-manifest" {
				continue
			}
			img, err := idx.Image(d.Digest)
			if err != nil {
				return nil, err
			}
			t := target{img: img, digest: d.Digest}
			if d.Platform != nil {
				t.platform = *d.Platform
			} else {
				cfg, err := img.ConfigFile()
				if err != nil {
					return nil, err
				}
				t.platform = v1.Platform{OS: cfg.OS, Architecture: cfg.Architecture, Variant: cfg.Variant}
			}
			if t.platform.OS != "unknown" {
				out = append(out, t)
			}
		}
	}
	return out, nil
}

func platformFinding(msg string) lint.Finding {
	return lint.Finding{ID: "image/platform", Severity: lint.Error, File: lint.Whole, Message: msg}
}

// platformString is os/arch[/variant], or "an unknown platform".
func platformString(p v1.Platform) string {
	if p.OS == "" && p.Architecture == "" {
		return "an unknown platform"
	}
	s := p.OS + "/" + p.Architecture
	if p.Variant != "" {
		s += "/" + p.Variant
	}
	return s
}
