package devenv

import (
	"fmt"
	"os"
	"path/filepath"

	"captf.io/captf/internal/localnode"
)

// DefaultImageStore is where the local environment keeps its module
// images: ${XDG_CACHE_HOME:-~/.cache}/captf/images, outside the checkout
// and next to the tool cache (whose binaries the images hard-link).
func DefaultImageStore() (string, error) {
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("finding the image store: %w", err)
		}
		cache = filepath.Join(home, ".cache")
	}
	return filepath.Join(cache, "captf", "images"), nil
}

// BuiltImage is one image of BuildImages.
type BuiltImage struct {
	// Ref is the image reference, local/<module>:<runtime>.
	Ref string
	// Dir is its directory in the store; ID the image ID its containers
	// report.
	Dir, ID string
	// Changed is false when the store already held the same content.
	Changed bool
}

// BuildImages writes the module image of every module of examples/modules
// for both runtimes (ExampleImages) into the image store store, as
// localnode.WriteImage lays them out: an image whose content did not
// change is left as it is, so a warm run only reads. report, when not nil,
// is told about each image as it is done, in reference order.
func BuildImages(store, repo, tools string, report func(BuiltImage)) ([]BuiltImage, error) {
	images, err := ExampleImages(repo, tools)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(store, 0o755); err != nil {
		return nil, fmt.Errorf("creating the image store: %w", err)
	}
	out := make([]BuiltImage, 0, len(images))
	for _, ref := range sortedRefs(images) {
		st, err := localnode.WriteImage(store, ref, images[ref])
		if err != nil {
			return out, fmt.Errorf("building the image %s in %s: %w", ref, store, err)
		}
		b := BuiltImage{Ref: ref, Dir: st.Dir, ID: st.ID, Changed: st.Changed}
		out = append(out, b)
		if report != nil {
			report(b)
		}
	}
	return out, nil
}
