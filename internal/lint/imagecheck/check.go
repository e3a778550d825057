package imagecheck

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"captf.io/captf/internal/lint"
	"captf.io/captf/pkg/contract"
)

// Options say which image is checked, and as what.
type Options struct {
	// Role is the contract role the module plays.
	Role contract.Role
	// Contract is the contract version checked against (contract.Version
	// when empty).
	Contract string
	// Ref is an image reference, or "oci:<dir>" for an OCI image layout
	// directory.
	Ref string
	// Platform picks the image of an index ("linux/amd64" when empty).
	Platform string
	// PlatformSet: Platform was asked for, so a single-platform image
	// for another is a finding (else it is checked as it is).
	PlatformSet bool
	// AllPlatforms checks every image of an index.
	AllPlatforms bool
	// Insecure reaches the registry over plain HTTP.
	Insecure bool
	// ModuleCheck runs the module checks on a directory holding the
	// image's /captf/module, extracted; nil skips them.
	ModuleCheck func(dir string) (ModuleFacts, error)
}

// ModuleFacts is what the module checks found of the image's module.
type ModuleFacts struct {
	// Findings of the module checks, their File relative to the module
	// directory (or lint.Whole).
	Findings []lint.Finding
	// Providers are the source addresses of the providers the module
	// requires, as written; built-in providers left out.
	Providers []string
	// Variables are the names of the variables the module declares.
	Variables []string
}

// Description describes the checked image, for the report.
type Description struct {
	// Reference is the reference checked, as given.
	Reference string `json:"reference"`
	// Digest and MediaType are those of the manifest or index it names.
	Digest    string `json:"digest"`
	MediaType string `json:"mediaType,omitempty"`
	// Platforms are those of an index's images.
	Platforms []string `json:"platforms,omitempty"`
	// Images are the images checked.
	Images []ImageDescription `json:"images"`
}

// ImageDescription describes one checked image.
type ImageDescription struct {
	Platform   string            `json:"platform"`
	Digest     string            `json:"digest"`
	User       string            `json:"user"`
	Entrypoint []string          `json:"entrypoint,omitempty"`
	Cmd        []string          `json:"cmd,omitempty"`
	WorkingDir string            `json:"workingDir,omitempty"`
	Labels     map[string]string `json:"labels,omitempty"`
	Layers     int               `json:"layers"`
}

// Check reads the image of opts and runs the image checks (and, on its
// module, opts.ModuleCheck). It returns the findings and a
// *Description. A bad reference or platform is a lint.Usage error; an
// image that cannot be pulled or read, or past the caps, a
// lint.Unreadable one.
func Check(ctx context.Context, opts Options) (findings []lint.Finding, description any, err error) {
	defer func() {
		if r := recover(); r != nil {
			findings, description, err = nil, nil, lint.Unreadable("image %s could not be read: %v", opts.Ref, r)
		}
	}()
	if opts.Contract == "" {
		opts.Contract = contract.Version
	}
	if opts.Platform == "" {
		opts.Platform = "linux/amd64"
	}
	want, err := v1.ParsePlatform(opts.Platform)
	if err != nil || want.OS == "" || want.Architecture == "" {
		return nil, nil, lint.Usage("--platform %q is no platform: give os/arch[/variant], such as linux/amd64", opts.Platform)
	}
	src, err := open(ctx, opts)
	if err != nil {
		return nil, nil, err
	}
	desc := &Description{Reference: opts.Ref, Digest: src.digest.String(), MediaType: string(src.mediaType), Images: []ImageDescription{}}
	targets, findings, err := pick(src, opts, *want, desc)
	if err != nil {
		return nil, nil, err
	}
	var perImage [][]lint.Finding
	var platforms []string
	for _, t := range targets {
		fs, d, err := checkImage(ctx, opts, t)
		if err != nil {
			return nil, nil, err
		}
		desc.Images = append(desc.Images, d)
		perImage, platforms = append(perImage, fs), append(platforms, d.Platform)
	}
	switch {
	case !opts.AllPlatforms && len(perImage) > 0:
		findings = append(findings, perImage[0]...)
	case opts.AllPlatforms:
		findings = append(findings, merge(perImage, platforms)...)
		findings = append(findings, sameCapacity(opts.Role, desc.Images)...)
	}
	return findings, desc, nil
}

// checkImage runs every check on one image.
func checkImage(ctx context.Context, opts Options, t target) ([]lint.Finding, ImageDescription, error) {
	cfg, err := t.img.ConfigFile()
	if err != nil || cfg == nil {
		return nil, ImageDescription{}, lint.Unreadable("reading the config of image %s (%s): %v", opts.Ref, platformString(t.platform), err)
	}
	c := cfg.Config
	d := ImageDescription{Platform: platformString(t.platform), Digest: t.digest.String(), User: c.User,
		Entrypoint: c.Entrypoint, Cmd: c.Cmd, WorkingDir: c.WorkingDir, Labels: c.Labels}
	tmp, err := os.MkdirTemp("", "tfcapi-lint-")
	if err != nil {
		return nil, d, lint.Unreadable("extracting image %s: %w", opts.Ref, err)
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	host := filepath.Join(tmp, "module")
	f, err := readImage(ctx, opts.Ref, t.img, host)
	if err != nil {
		return nil, d, err
	}
	d.Layers = f.layers
	var findings []lint.Finding
	if t.platform.OS != "" && t.platform.OS != "linux" {
		findings = append(findings, platformFinding(fmt.Sprintf("the image is for %s, but CAPTF Jobs run on linux nodes: build it for linux", d.Platform)))
	}
	u, userFindings := resolveUser(f, c.User)
	findings = append(findings, userFindings...)
	moduleFindings, present, err := checkModule(f)
	if err != nil {
		return nil, d, err
	}
	findings = append(findings, moduleFindings...)
	runtime := c.Labels[labelRuntime]
	findings = append(findings, checkRuntime(f, u, runtime)...)
	findings = append(findings, checkReserved(f)...)
	findings = append(findings, checkEntrypoint(c)...)
	m, mirrorFindings := checkMirror(f)
	findings = append(findings, mirrorFindings...)
	findings = append(findings, checkReadable(f, u)...)
	var facts ModuleFacts
	if present && opts.ModuleCheck != nil {
		if facts, err = moduleCheck(opts.ModuleCheck, host); err != nil {
			return nil, d, err
		}
		findings = append(findings, facts.Findings...)
	}
	if runtime != runtimeTofu && runtime != runtimeTerraform {
		runtime = linkedRuntime(f)
	}
	findings = append(findings, checkProviders(m, facts.Providers, runtime, t.platform)...)
	findings = append(findings, checkLabels(opts.Role, opts.Contract, c.Labels, facts.Variables)...)
	return findings, d, nil
}

// linkedRuntime is the runtime the names on the way to /captf/runtime
// suggest, "" for none.
func linkedRuntime(f *fsys) string {
	_, canon, links := f.resolve(runtimePath, true)
	for _, name := range append(links, canon) {
		if r := runtimeOf(path.Base(name)); r != "" {
			return r
		}
	}
	return ""
}

// moduleCheck runs check on the extracted module at host, and makes its
// findings' files image paths.
func moduleCheck(check func(string) (ModuleFacts, error), host string) (ModuleFacts, error) {
	facts, err := check(host)
	if err != nil {
		return ModuleFacts{}, lint.Unreadable("the module at /captf/module: %s", strings.ReplaceAll(err.Error(), host, moduleDir))
	}
	out := make([]lint.Finding, 0, len(facts.Findings))
	for _, f := range facts.Findings {
		switch file := filepath.ToSlash(f.File); {
		case file == lint.Whole || file == "":
			f.File = moduleDir
		case strings.HasPrefix(f.File, host):
			f.File = path.Join(moduleDir, filepath.ToSlash(strings.TrimPrefix(f.File, host)))
		default:
			f.File = path.Join(moduleDir, file)
		}
		f.Message = strings.ReplaceAll(f.Message, host, moduleDir)
		out = append(out, f)
	}
	facts.Findings = out
	return facts, nil
}

// merge makes one list of the findings of several platforms' images:
// each finding once, saying the platforms it is found on.
func merge(perImage [][]lint.Finding, platforms []string) []lint.Finding {
	index := map[lint.Finding]int{}
	var out []lint.Finding
	var on [][]string
	for i, findings := range perImage {
		for _, f := range findings {
			j, ok := index[f]
			if !ok {
				j = len(out)
				index[f] = j
				out, on = append(out, f), append(on, nil)
			}
			if len(on[j]) == 0 || on[j][len(on[j])-1] != platforms[i] {
				on[j] = append(on[j], platforms[i])
			}
		}
	}
	for j := range out {
		out[j].Message = strings.Join(on[j], ", ") + ": " + out[j].Message
	}
	return out
}

// sameCapacity is image/label-capacity across an index: a machine
// image's capacity labels are the same on every platform, as the
// controller reads the labels of only one.
func sameCapacity(role contract.Role, images []ImageDescription) []lint.Finding {
	if role != contract.RoleMachine || len(images) < 2 {
		return nil
	}
	for _, img := range images[1:] {
		for _, l := range []string{labelCapacity, labelNodeInfo} {
			if img.Labels[l] != images[0].Labels[l] {
				return []lint.Finding{{ID: "image/label-capacity", Severity: lint.Error, File: lint.Whole,
					Message: fmt.Sprintf("label %s differs between %s and %s: the controller reads one platform's, so set the same value on every platform (a fixed build argument, never TARGETARCH)", l, images[0].Platform, img.Platform)}}
			}
		}
	}
	return nil
}
