package devenv

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"

	"captf.io/captf/internal/imagebuild"
	"captf.io/captf/internal/lint"
	"captf.io/captf/internal/lint/command"
	"captf.io/captf/internal/lint/imagecheck"
	"captf.io/captf/internal/lint/modulecheck"
	"captf.io/captf/internal/localnode"
	"captf.io/captf/pkg/contract"
)

// ModuleImageOptions say which module image BuildModuleImage builds.
type ModuleImageOptions struct {
	// Module is the module's directory; Role its contract role.
	Module string
	Role   contract.Role
	// Runtime is tofu or terraform.
	Runtime string
	// Tools is the tool cache (runtimes, shell, provider mirror).
	Tools string
	// Ref is the reference the image store holds it under; empty is
	// DevImageRef's.
	Ref string
	// Layout is the OCI image layout directory to write; empty is
	// out/images/<name>-<runtime> under the current directory.
	Layout string
	// Store is the image store to import it into.
	Store string
}

// BuiltModule is a module image BuildModuleImage wrote.
type BuiltModule struct {
	// Ref is what the image store holds it under; Digest its manifest
	// digest; Layout the OCI layout written.
	Ref, Digest, Layout string
}

// DevImageRef is the reference of a module directory's image in the
// local environment: local/dev/<directory name>:<runtime>, apart from the
// example images' local/<module>:<runtime>.
func DevImageRef(module, runtime string) string {
	return "local/dev/" + repoName(module) + ":" + runtime
}

var notRepoChars = regexp.MustCompile(`[^a-z0-9._-]+`)

// repoName turns a directory's name into a repository path component.
func repoName(module string) string {
	abs, err := filepath.Abs(module)
	if err != nil {
		abs = module
	}
	name := strings.Trim(notRepoChars.ReplaceAllString(strings.ToLower(filepath.Base(abs)), "-"), "-._")
	if name == "" {
		name = "module"
	}
	return name
}

// BuildModuleImage lays a module directory over its runtime's base image
// (imagebuild.BuildModule: the providers it requires come from the tool
// cache's mirror), writes it as an OCI image layout and imports that into
// the image store, where the local node runs it by its reference and
// digest.
func BuildModuleImage(ctx context.Context, o ModuleImageOptions) (BuiltModule, error) {
	if o.Runtime != "tofu" && o.Runtime != "terraform" {
		return BuiltModule{}, fmt.Errorf("--runtime=%q: use tofu or terraform", o.Runtime)
	}
	if o.Ref == "" {
		o.Ref = DevImageRef(o.Module, o.Runtime)
	}
	if o.Layout == "" {
		o.Layout = filepath.Join("out", "images", repoName(o.Module)+"-"+o.Runtime)
	}
	res, err := modulecheck.Check(o.Module, modulecheck.Options{Role: o.Role})
	if err != nil {
		return BuiltModule{}, err
	}
	img, err := imagebuild.BuildModule(ctx, imagebuild.ModuleInputs{
		Module: o.Module, Role: string(o.Role), Runtime: o.Runtime, Tools: o.Tools,
		Providers: res.Providers, Arch: runtime.GOARCH,
	})
	if err != nil {
		return BuiltModule{}, fmt.Errorf("building the image of %s: %w", o.Module, err)
	}
	digest, err := imagebuild.WriteLayout(o.Layout, o.Ref, img)
	if err != nil {
		return BuiltModule{}, fmt.Errorf("writing %s: %w", o.Layout, err)
	}
	if err := os.MkdirAll(o.Store, 0o755); err != nil {
		return BuiltModule{}, fmt.Errorf("creating the image store: %w", err)
	}
	if _, err := localnode.ImportImage(o.Store, o.Layout, o.Ref, runtime.GOARCH); err != nil {
		return BuiltModule{}, fmt.Errorf("importing %s into the image store: %w", o.Layout, err)
	}
	return BuiltModule{Ref: o.Ref, Digest: digest.String(), Layout: o.Layout}, nil
}

// LintImage runs tfcapi-lint's image checks (and, on its /captf/module,
// the module checks) on the OCI layout of a module image, as `tfcapi-lint
// image --role=<role> oci:<layout>` does.
func LintImage(ctx context.Context, layout string, role contract.Role) (*lint.Report, error) {
	ref := "oci:" + layout
	findings, desc, err := imagecheck.Check(ctx, imagecheck.Options{
		Role: role, Contract: contract.Version, Ref: ref, ModuleCheck: command.ModuleFacts(role),
	})
	if err != nil {
		return nil, err
	}
	r := &lint.Report{Context: fmt.Sprintf("image %s, role %s, contract %s", ref, role, contract.Version), Findings: findings, Image: desc}
	r.Finish(nil)
	return r, nil
}
