package kubelet

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"captf.io/captf/internal/test/envtest"
)

// Image is what a module image reference holds on this node: the module
// directory (the image's /captf/module) and the runtime of the tool cache
// that plays /captf/runtime, "tofu" or "terraform". Every image gets the
// tool cache's provider mirror as /captf/providers.
type Image struct {
	ModuleDir string
	Runtime   string
}

// Runtimes are the runtimes an Image may name.
var Runtimes = []string{"tofu", "terraform"}

// ExampleModules are the modules of examples/modules.
var ExampleModules = []string{"noop-cluster", "noop-machine", "noop-machinepool", "slow"}

// ExampleImage is the reference ExampleImages gives a module and runtime:
// local/<module>:<runtime>.
func ExampleImage(module, runtime string) string {
	return "local/" + module + ":" + runtime
}

// ExampleImages maps ExampleImage(module, runtime) to the example module
// for every module of examples/modules and both runtimes.
func ExampleImages(t testing.TB) map[string]Image {
	t.Helper()
	root, err := envtest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	images := map[string]Image{}
	for _, m := range ExampleModules {
		for _, rt := range Runtimes {
			images[ExampleImage(m, rt)] = Image{ModuleDir: filepath.Join(root, "examples", "modules", m), Runtime: rt}
		}
	}
	return images
}

// image is an Image checked and resolved against the tool cache.
type image struct {
	Image
	ref string
	// id is the image ID a container status reports:
	// <repository>@sha256:<digest of the module and runtime>.
	id string
	// bin is the runtime binary in the tool cache.
	bin string
}

// resolveImages checks every image and computes its ID; a missing
// directory or runtime fails the test.
func resolveImages(t testing.TB, tools string, images map[string]Image) map[string]image {
	t.Helper()
	out := make(map[string]image, len(images))
	for ref, img := range images {
		if img.Runtime != "tofu" && img.Runtime != "terraform" {
			t.Fatalf("kubelet: image %s: runtime %q is neither tofu nor terraform", ref, img.Runtime)
		}
		dir, err := filepath.Abs(img.ModuleDir)
		if err != nil {
			t.Fatal(err)
		}
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			t.Fatalf("kubelet: image %s: the module directory %s is missing", ref, dir)
		}
		bin := filepath.Join(tools, "bin", img.Runtime)
		if _, err := os.Stat(bin); err != nil {
			t.Fatalf("FAIL: %s is missing; run `make tools` (or `make test`) to build the runtimes", bin)
		}
		sum, err := contentDigest(dir, img.Runtime)
		if err != nil {
			t.Fatalf("kubelet: image %s: %v", ref, err)
		}
		img.ModuleDir = dir
		out[ref] = image{Image: img, ref: ref, id: repository(ref) + "@sha256:" + sum, bin: bin}
	}
	return out
}

// lookup finds the image of a reference: by the reference itself, or, for a
// digest reference (<repository>@sha256:<hex>) such as a manager pins from
// a container status, by the image ID.
func lookup(images map[string]image, ref string) (image, bool) {
	if img, ok := images[ref]; ok {
		return img, true
	}
	if !strings.Contains(ref, "@sha256:") {
		return image{}, false
	}
	for _, img := range images {
		if img.id == ref {
			return img, true
		}
	}
	return image{}, false
}

// knownRefs lists the references an unknown one is reported against.
func knownRefs(images map[string]image) []string {
	refs := make([]string, 0, len(images))
	for ref := range images {
		refs = append(refs, ref)
	}
	sort.Strings(refs)
	return refs
}

// repository is a reference without its digest and tag.
func repository(ref string) string {
	ref, _, _ = strings.Cut(ref, "@")
	slash := strings.LastIndex(ref, "/")
	if colon := strings.LastIndex(ref, ":"); colon > slash {
		ref = ref[:colon]
	}
	return ref
}

// refDigest is the image ID of an image the kubelet does not run (the
// runner's init container): a digest of its reference.
func refDigest(ref string) string {
	sum := sha256.Sum256([]byte(ref))
	return repository(ref) + "@sha256:" + hex.EncodeToString(sum[:])
}

// contentDigest hashes what the image holds: the runtime's name and every
// file of the module directory (path, mode and content), in path order.
func contentDigest(dir, runtime string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "runtime:%s\n", runtime)
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%d:%s,%o,%d:", len(rel), rel, info.Mode(), info.Size())
		data, err := os.ReadFile(path)
		h.Write(data)
		return err
	})
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
