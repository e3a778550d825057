package workspace

import (
	"slices"
	"strings"

	"captf.io/captf/internal/records"
)

// The image of a Job. An apply runs spec.source.image. A destroy, refresh,
// drift or restore runs what the last successful apply ran, pinned by the
// digest its pod reported; when that cannot be pulled it falls back to the
// recorded tag, then to spec.source.image (ImagePullFallback).

// imageChoice is the image a non-apply Job runs and the ones it falls back
// to.
type imageChoice struct {
	image     string
	fallbacks []string
	// digestUnknown: no digest is pinned, so the Job runs a tag.
	digestUnknown bool
}

// chooseImage orders the candidates of a non-apply Job rendering rec: the
// applied record's digest (when rec ran the same image), rec's tag,
// spec.source.image; images that could not be pulled before are skipped
// while another is left.
func chooseImage(rec, applied *records.Record, spec string, unpullable []string) imageChoice {
	var candidates []string
	add := func(ref string) {
		if ref != "" && !slices.Contains(candidates, ref) {
			candidates = append(candidates, ref)
		}
	}
	pinned := ""
	if applied != nil && applied.ImageDigest != "" && (rec == nil || rec.Image == applied.Image) {
		pinned = digestRef(applied.Image, applied.ImageDigest)
	}
	add(pinned)
	if rec != nil {
		add(rec.Image)
	}
	add(spec)
	left := slices.DeleteFunc(slices.Clone(candidates), func(ref string) bool { return slices.Contains(unpullable, ref) })
	if len(left) == 0 && len(candidates) > 0 {
		left = candidates[len(candidates)-1:]
	}
	c := imageChoice{digestUnknown: pinned == ""}
	if len(left) > 0 {
		c.image, c.fallbacks = left[0], left[1:]
	}
	return c
}

// pickImage sets the image of a non-apply Job rendering rec.
func (p *pass) pickImage(ri *runInputs, rec *records.Record) {
	var unpullable []string
	if p.inputs.attempt != nil {
		unpullable = p.inputs.attempt.UnpullableImages
	}
	c := chooseImage(rec, p.inputs.applied, p.w.Source.Image, unpullable)
	ri.image, ri.fallbacks, ri.digestUnknown = c.image, c.fallbacks, c.digestUnknown
}

// digestRef turns a pod's imageID into a pullable reference pinned by
// digest: <repository>@sha256:<hex>.
func digestRef(image, imageID string) string {
	at := strings.LastIndex(imageID, "@sha256:")
	if at < 0 {
		return ""
	}
	repo := image
	if i := strings.Index(repo, "@"); i >= 0 {
		repo = repo[:i]
	}
	if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
		repo = repo[:i]
	}
	return repo + imageID[at:]
}
