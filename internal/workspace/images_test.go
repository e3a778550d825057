package workspace

import (
	"slices"
	"testing"

	"captf.io/captf/internal/records"
)

func TestDigestRef(t *testing.T) {
	testCases := []struct{ image, id, want string }{
		{"registry.example/mods/noop:v1", "registry.example/mods/noop@sha256:abc", "registry.example/mods/noop@sha256:abc"},
		{"registry.example:5000/noop:v1", "docker-pullable://registry.example:5000/noop@sha256:abc", "registry.example:5000/noop@sha256:abc"},
		{"registry.example:5000/noop", "sha256:abc", ""},
		{"local/noop@sha256:old", "local/noop@sha256:new", "local/noop@sha256:new"},
	}
	for _, tc := range testCases {
		if got := digestRef(tc.image, tc.id); got != tc.want {
			t.Errorf("digestRef(%q, %q) = %q, want %q", tc.image, tc.id, got, tc.want)
		}
	}
}

func TestChooseImage(t *testing.T) {
	const (
		tag    = "registry.example/noop:v1"
		newTag = "registry.example/noop:v2"
		pinned = "registry.example/noop@sha256:abc"
	)
	applied := &records.Record{Image: tag, ImageDigest: "registry.example/noop@sha256:abc"}
	testCases := []struct {
		name          string
		rec, applied  *records.Record
		spec          string
		unpullable    []string
		want          string
		fallbacks     []string
		digestUnknown bool
	}{
		{"the pinned digest, then the tag, then the spec", applied, applied, newTag, nil, pinned, []string{tag, newTag}, false},
		{"the spec is the tag: one fallback", applied, applied, tag, nil, pinned, []string{tag}, false},
		{"a record of another image is not pinned", &records.Record{Image: newTag}, applied, newTag, nil, newTag, nil, true},
		{"no applied record: the recorded tag", &records.Record{Image: tag}, nil, newTag, nil, tag, []string{newTag}, true},
		{"an unpullable digest is skipped", applied, applied, newTag, []string{pinned}, tag, []string{newTag}, false},
		{"all unpullable: the last one runs to its deadline", applied, applied, tag, []string{pinned, tag}, tag, nil, false},
		{"no record: the spec", nil, nil, tag, nil, tag, nil, true},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			got := chooseImage(tc.rec, tc.applied, tc.spec, tc.unpullable)
			if got.image != tc.want || !slices.Equal(got.fallbacks, tc.fallbacks) || got.digestUnknown != tc.digestUnknown {
				t.Errorf("chooseImage = %+v, want image %s, fallbacks %v, digestUnknown %v", got, tc.want, tc.fallbacks, tc.digestUnknown)
			}
		})
	}
}
