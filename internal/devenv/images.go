package devenv

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"captf.io/captf/internal/atomicfile"
	"captf.io/captf/internal/imagebuild"
	"captf.io/captf/internal/lint/modulecheck"
	"captf.io/captf/internal/localnode"
	"captf.io/captf/pkg/contract"
)

// DefaultImageStore is where the local environment keeps its module
// images: ${XDG_CACHE_HOME:-~/.cache}/captf/images, outside the checkout
// and next to the tool cache.
func DefaultImageStore() (string, error) {
	cache, err := captfCache()
	return filepath.Join(cache, "images"), err
}

// captfCache is captf's directory of the user's cache,
// $XDG_CACHE_HOME/captf or ~/.cache/captf.
func captfCache() (string, error) {
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("finding the cache directory: %w", err)
		}
		cache = filepath.Join(home, ".cache")
	}
	return filepath.Join(cache, "captf"), nil
}

// ManagerBinaries is the directory of the manager image's binaries for
// this architecture, beside the image store:
// $XDG_CACHE_HOME/captf/bin/linux-<arch>.
func ManagerBinaries() (string, error) {
	cache, err := captfCache()
	return filepath.Join(cache, "bin", "linux-"+runtime.GOARCH), err
}

// BuiltImage is one image of BuildImages.
type BuiltImage struct {
	// Ref is the image reference, local/<module>:<runtime>.
	Ref string
	// Dir is its directory in the store; ID the image ID its containers
	// report (local/<module>@<manifest digest>).
	Dir, ID string
	// Changed is false when the store already held the image of the same
	// recipe.
	Changed bool
}

// recipeVersion changes when the way BuildImages builds an image changes,
// so that every stored image is built again.
const recipeVersion = "example-module-image/4"

// BuildImages builds the image of every module of examples/modules for
// both runtimes as a module author's image is built (imagebuild.BuildModule:
// the module laid over its runtime's base image, with a mirror of the
// providers it requires from the tool cache, labelled with its role and,
// for an example machine, its capacity) and stores it in the image store
// under local/<module>:<runtime> (ExampleImage). An image whose recipe did
// not change since it was stored (the module's files, the tool cache's
// runtime, shell and provider packages, the labels) is left as it is, so
// a warm run only reads. report, when not nil, is told about each image as
// it is done, in reference order. A cancelled ctx stops it between images.
func BuildImages(ctx context.Context, store, repo, tools string, report func(BuiltImage)) ([]BuiltImage, error) {
	modules, err := exampleModules(repo, tools)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(store, 0o755); err != nil {
		return nil, fmt.Errorf("creating the image store: %w", err)
	}
	// Each runtime's base image, built once for all the modules that need
	// building.
	bases := map[string]v1.Image{}
	base := func(rt string) (v1.Image, error) {
		if b, ok := bases[rt]; ok {
			return b, nil
		}
		b, err := imagebuild.RuntimeBase(ctx, rt, tools, runtime.GOARCH, imagebuild.Meta{})
		bases[rt] = b
		return b, err
	}
	var out []BuiltImage
	for _, m := range modules {
		for _, rt := range []string{"terraform", "tofu"} {
			if err := ctx.Err(); err != nil {
				return out, err
			}
			b, err := buildExample(store, tools, m, rt, base)
			if err != nil {
				return out, fmt.Errorf("building the image %s in %s: %w", ExampleImage(m.name, rt), store, err)
			}
			out = append(out, b)
			if report != nil {
				report(b)
			}
		}
	}
	return out, nil
}

// exampleModule is a module of examples/modules, as its images need it.
type exampleModule struct {
	name, dir string
	role      contract.Role
	providers []string
	labels    map[string]string
}

// exampleModules reads the modules of the checkout's examples/modules, in
// name order, after checking that the tool cache has what their images
// are made of.
func exampleModules(repo, tools string) ([]exampleModule, error) {
	for _, p := range []string{filepath.Join(tools, "providers"), filepath.Join(tools, "bin", "sh"), filepath.Join(tools, "bin", "tofu"), filepath.Join(tools, "bin", "terraform")} {
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("%s is missing: run `make tools`", p)
		}
	}
	if _, err := os.Stat(imagebuild.CABundlePath); err != nil {
		return nil, fmt.Errorf("the module images hold this machine's CA bundle, for modules that reach registries: %w (install ca-certificates)", err)
	}
	dir := filepath.Join(repo, "examples", "modules")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []exampleModule
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		m := exampleModule{name: e.Name(), dir: filepath.Join(dir, e.Name()), role: exampleRole(e.Name()), labels: exampleLabels(e.Name())}
		if m.role == "" {
			return nil, fmt.Errorf("the example module %s plays no role its name says: end it with -cluster, -machine or -machinepool", m.dir)
		}
		res, err := modulecheck.Check(m.dir, modulecheck.Options{Role: m.role})
		if err != nil {
			return nil, fmt.Errorf("reading the example module %s: %w", m.dir, err)
		}
		m.providers = res.Providers
		out = append(out, m)
	}
	return out, nil
}

// buildExample builds the image of m on runtime rt, unless the store
// holds that of the same recipe.
func buildExample(store, tools string, m exampleModule, rt string, base func(string) (v1.Image, error)) (BuiltImage, error) {
	ref := ExampleImage(m.name, rt)
	dir, err := localnode.StorePath(store, ref)
	if err != nil {
		return BuiltImage{}, err
	}
	id := func(digest string) string { return "local/" + m.name + "@" + digest }
	recipe, err := exampleRecipe(tools, m, rt)
	if err != nil {
		return BuiltImage{}, err
	}
	recipeFile := filepath.Join(store, ".recipes", m.name, rt)
	if kept, err := os.ReadFile(recipeFile); err == nil {
		if r, digest, ok := strings.Cut(strings.TrimSpace(string(kept)), " "); ok && r == recipe {
			if have, err := localnode.ImageDigest(store, ref); err == nil && have == digest {
				return BuiltImage{Ref: ref, Dir: dir, ID: id(digest)}, nil
			}
		}
	}
	b, err := base(rt)
	if err != nil {
		return BuiltImage{}, err
	}
	img, err := imagebuild.LayModule(b, imagebuild.ModuleInputs{
		Module: m.dir, Role: string(m.role), Runtime: rt, Tools: tools, Providers: m.providers,
		Arch: runtime.GOARCH, Labels: m.labels,
	})
	if err != nil {
		return BuiltImage{}, err
	}
	imp, err := localnode.StoreImage(store, img, ref)
	if err != nil {
		return BuiltImage{}, err
	}
	if err := os.MkdirAll(filepath.Dir(recipeFile), 0o755); err != nil {
		return BuiltImage{}, err
	}
	if err := atomicfile.Write(recipeFile, []byte(recipe+" "+imp.Digest+"\n"), 0o644); err != nil {
		return BuiltImage{}, fmt.Errorf("recording its recipe: %w", err)
	}
	return BuiltImage{Ref: ref, Dir: dir, ID: id(imp.Digest), Changed: imp.Changed}, nil
}

// exampleRecipe digests what the image of m on rt is made of: the module's
// files, the runtime, the shell and the CA bundle (by size and
// modification time: the tool cache's files are big and written once),
// the packages of the providers it requires, and its labels.
func exampleRecipe(tools string, m exampleModule, rt string) (string, error) {
	h := sha256.New()
	labels, err := json.Marshal(m.labels)
	if err != nil {
		return "", err
	}
	// The base image as imagebuild lays it out (its files, user,
	// entrypoint, labels), so that a change of the layout builds again.
	spec, err := json.Marshal(imagebuild.BaseSpec(imagebuild.BaseInputs{Runtime: rt, Bin: filepath.Join(tools, "bin", rt),
		Shell: filepath.Join(tools, "bin", "sh"), CAs: imagebuild.CABundlePath}, runtime.GOARCH, imagebuild.Meta{}))
	if err != nil {
		return "", err
	}
	fmt.Fprintf(h, "%s\n%s\n%s\n%s\n%s\n%s\n", recipeVersion, runtime.GOARCH, rt, m.role, labels, spec)
	if err := digestModule(h, m.dir); err != nil {
		return "", err
	}
	for _, p := range []string{filepath.Join(tools, "bin", rt), filepath.Join(tools, "bin", "sh"), imagebuild.CABundlePath} {
		if err := digestStat(h, p); err != nil {
			return "", err
		}
	}
	for _, source := range m.providers {
		fmt.Fprintf(h, "provider %s\n", source)
		// A source without a host is mirrored under each runtime's
		// default one. A provider the mirror lacks is left to the build,
		// which names it.
		paths := []string{filepath.Join("registry.opentofu.org", source), filepath.Join("registry.terraform.io", source)}
		if strings.Count(source, "/") == 2 {
			paths = []string{source}
		}
		for _, p := range paths {
			if err := digestTree(h, filepath.Join(tools, "providers", filepath.FromSlash(p))); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return "", err
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// digestModule adds the module directory to h as the image holds it
// (imagebuild.ModuleFiles): each entry's path and mode, a file's content,
// a link's target as written; what the image leaves out is left out.
func digestModule(h hash.Hash, dir string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if p != dir && imagebuild.SkippedInModule(d.Name(), d.IsDir()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			fmt.Fprintf(h, "link %s %s\n", rel, target)
		case d.IsDir():
			fmt.Fprintf(h, "dir %s\n", rel)
		default:
			info, err := d.Info()
			if err != nil {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			fmt.Fprintf(h, "file %s %o %d\n", rel, info.Mode(), len(data))
			_, _ = h.Write(data)
		}
		return nil
	})
}

// digestTree adds the tree at root to h, links followed (a provider
// mirror's, as the build follows them): each file's path, mode, size and
// modification time.
func digestTree(h hash.Hash, root string) error {
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		return err
	}
	return filepath.WalkDir(real, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(real, p)
		st, err := os.Stat(p)
		if err != nil {
			return err
		}
		if st.IsDir() {
			if p != real && d.Type()&fs.ModeSymlink != 0 {
				fmt.Fprintf(h, "link %s\n", rel)
				return digestTree(h, p)
			}
			fmt.Fprintf(h, "dir %s %o\n", rel, st.Mode())
			return nil
		}
		fmt.Fprintf(h, "file %s %o %d %d\n", rel, st.Mode(), st.Size(), st.ModTime().UnixNano())
		return nil
	})
}

// digestStat adds a file's path, size and modification time to h.
func digestStat(h hash.Hash, p string) error {
	st, err := os.Stat(p)
	if err != nil {
		return err
	}
	fmt.Fprintf(h, "stat %s %d %d\n", p, st.Size(), st.ModTime().UnixNano())
	return nil
}
