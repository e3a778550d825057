package imagebuild

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"

	"captf.io/captf/internal/imagemeta"
	"captf.io/captf/internal/jobs"
)

// moduleUID owns the module's and the mirror's files, as the
// Containerfile's COPY --chown=65532:65532 does.
const moduleUID = 65532

// defaultHosts are where each runtime finds a provider whose source names
// no registry host.
var defaultHosts = map[string]string{"tofu": "registry.opentofu.org", "terraform": "registry.terraform.io"}

// ModuleInputs are what a module image is made of.
type ModuleInputs struct {
	// Module is the module's directory; Role its contract role.
	Module, Role string
	// Runtime is "tofu" or "terraform": the base image it is laid over.
	Runtime string
	// Tools is the tool cache: the runtime and the shell of the base
	// image, and the provider mirror the module's providers come from.
	Tools string
	// Providers are the source addresses the module requires
	// ("hashicorp/null"), as modulecheck lists them.
	Providers []string
	// Arch is the image's architecture, this machine's.
	Arch string
	// Meta are the OCI labels.
	Meta Meta
	// Labels are more labels of the image, as the recipe's build
	// arguments give them (io.captf.capacity, io.captf.node-info).
	Labels map[string]string
}

// BuildModule lays a module over the base image of its runtime, as the
// module-author guide's Containerfile does, without a container daemon:
// the base image (RuntimeBase) and LayModule.
func BuildModule(ctx context.Context, in ModuleInputs) (v1.Image, error) {
	base, err := RuntimeBase(ctx, in.Runtime, in.Tools, in.Arch, in.Meta)
	if err != nil {
		return nil, err
	}
	return LayModule(base, in)
}

// LayModule lays a module over base, the base image of its runtime
// (RuntimeBase, which may serve several modules): a layer holds the module
// at /captf/module and a filesystem mirror of the providers it requires at
// /captf/providers taken from the tool cache, owned by 65532 (empty when
// it requires none, as the Containerfile's: init then installs nothing
// from a registry, and a provider only an older state names fails init
// naming it instead of reaching out); the image is labelled with its role,
// when it has one, and in.Labels. A provider the tool cache does not
// mirror is an error naming it.
func LayModule(base v1.Image, in ModuleInputs) (v1.Image, error) {
	host, ok := defaultHosts[in.Runtime]
	if !ok {
		return nil, fmt.Errorf("runtime %q: use tofu or terraform", in.Runtime)
	}
	files, err := moduleFiles(in.Module)
	if err != nil {
		return nil, err
	}
	// A provider whose source names no registry host is mirrored under
	// both runtimes' default hosts: a state one runtime wrote names its
	// providers by its host, and the other runtime, after a switch, looks
	// for them there.
	hosts := []string{host}
	for _, other := range slices.Sorted(maps.Values(defaultHosts)) {
		if other != host {
			hosts = append(hosts, other)
		}
	}
	for _, source := range in.Providers {
		for i, h := range hosts {
			if i > 0 && strings.Count(source, "/") == 2 {
				break
			}
			mirrored, err := mirrorFiles(filepath.Join(in.Tools, "providers"), source, h)
			if err != nil {
				return nil, err
			}
			files = append(files, mirrored...)
		}
	}
	if len(in.Providers) == 0 {
		files = append(files, owned([]File{{Path: jobs.ProvidersDir, Dir: true, Mode: 0o755}})...)
	}
	cf, err := base.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	if cf.Config.Labels == nil {
		cf.Config.Labels = map[string]string{}
	}
	if in.Role != "" {
		cf.Config.Labels[imagemeta.LabelRole] = in.Role
	}
	maps.Copy(cf.Config.Labels, in.Labels)
	labelled, err := mutate.ConfigFile(base, cf)
	if err != nil {
		return nil, err
	}
	return appendFiles(labelled, files, "the module and its provider mirror")
}

// RuntimeBase is the module base image (BaseSpec) of runtime from the tool
// cache tools: its runtime, asked its version, and its shell.
func RuntimeBase(ctx context.Context, runtime, tools, arch string, meta Meta) (v1.Image, error) {
	if _, ok := defaultHosts[runtime]; !ok {
		return nil, fmt.Errorf("runtime %q: use tofu or terraform", runtime)
	}
	bi := BaseInputs{Runtime: runtime, Bin: filepath.Join(tools, "bin", runtime),
		Shell: filepath.Join(tools, "bin", "sh"), CAs: CABundlePath}
	for _, p := range []string{bi.Shell, bi.CAs} {
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("the base image needs %s: %w", p, err)
		}
	}
	v, err := RuntimeVersion(ctx, bi.Bin)
	if err != nil {
		return nil, err
	}
	bi.Version = v
	return Build(BaseSpec(bi, arch, meta))
}

// SkippedInModule says what a module directory holds that its image does
// not, as the guide's .dockerignore leaves them out: .terraform and .git
// directories, state files.
func SkippedInModule(name string, dir bool) bool {
	if dir {
		return name == ".terraform" || name == ".git"
	}
	return strings.Contains(name, ".tfstate")
}

// moduleFiles lists the module directory as /captf/module.
func moduleFiles(dir string) ([]File, error) {
	info, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("the module directory: %w", err)
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("the module %s is not a directory", dir)
	}
	files, err := walkTree(dir, jobs.ModuleDir, false, SkippedInModule)
	return owned(files), err
}

// mirrorFiles lists the tool cache mirror's packages of one provider as
// /captf/providers/HOST/NAMESPACE/TYPE, links followed.
func mirrorFiles(mirror, source, defaultHost string) ([]File, error) {
	parts := strings.Split(source, "/")
	if len(parts) == 2 {
		parts = append([]string{defaultHost}, parts...)
	}
	if len(parts) != 3 {
		return nil, fmt.Errorf("provider source %q: want [HOST/]NAMESPACE/TYPE", source)
	}
	rel := path.Join(parts...)
	src, err := filepath.EvalSymlinks(filepath.Join(mirror, filepath.FromSlash(rel)))
	if err != nil {
		return nil, fmt.Errorf("the provider %s is not in the tool cache's mirror (%s), which holds only the providers hack/tools builds: build this module's image with a container builder and images/module/Containerfile", rel, mirror)
	}
	files, err := walkTree(src, path.Join(jobs.ProvidersDir, rel), true, nil)
	return owned(files), err
}

// owned gives files to 65532, as the Containerfile's COPY --chown does.
func owned(files []File) []File {
	for i := range files {
		files[i].UID, files[i].GID = moduleUID, moduleUID
	}
	return files
}
