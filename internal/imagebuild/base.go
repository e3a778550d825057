package imagebuild

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"captf.io/captf/internal/imagemeta"
	"captf.io/captf/internal/jobs"
	"captf.io/captf/pkg/contract"
)

// The module base images of the module-author guide: a runtime and a
// shell a module image is laid over (FROM <runtime>-base), with the
// runtime's labels. Names are the layouts' directories under `make
// images`' output.
const (
	OpenTofuBase  = "opentofu-base"
	TerraformBase = "terraform-base"
	// ShellPath is the base images' shell, which local-exec provisioners
	// run.
	ShellPath = "/bin/sh"
	// BaseUser is the base images' user, captf, as the Job's
	// securityContext runs it.
	BaseUser = "65532:65532"
)

// BaseRuntimes maps each base image to the runtime it holds.
var BaseRuntimes = map[string]string{OpenTofuBase: "tofu", TerraformBase: "terraform"}

// BaseInputs are the host files a base image is made of.
type BaseInputs struct {
	// Runtime is "tofu" or "terraform"; Bin its static binary, Version
	// the version it reports (RuntimeVersion reads it).
	Runtime, Bin, Version string
	// Shell is the static shell put at /bin/sh; CAs the CA bundle.
	Shell, CAs string
}

// BaseSpec is a module base image: the runtime at
// /usr/local/bin/<runtime> with /captf/runtime a link to it, a shell at
// /bin/sh, the CA bundle, the captf user (65532, no login shell, home
// /tmp), a sticky /tmp, /captf as the working directory and the runtime as
// the entrypoint (for manual runs: a Job runs the runner instead), and the
// labels io.captf.contract, io.captf.runtime and io.captf.runtime.version.
// Nothing is at the paths a module image adds (/captf/module,
// /captf/providers) or a Job mounts (/captf/work, /captf/bin, ...).
func BaseSpec(in BaseInputs, arch string, meta Meta) Spec {
	bin := path.Join("/usr/local/bin", in.Runtime)
	files := []File{
		{Path: bin, Mode: 0o755, Source: in.Bin},
		{Path: jobs.RuntimePath, Link: bin},
		{Path: ShellPath, Mode: 0o755, Source: in.Shell},
		{Path: "/etc/passwd", Mode: 0o644, Data: []byte("root:x:0:0:root:/root:/usr/sbin/nologin\ncaptf:x:65532:65532:captf:/tmp:/usr/sbin/nologin\n")},
		{Path: "/etc/group", Mode: 0o644, Data: []byte("root:x:0:\ncaptf:x:65532:\n")},
		{Path: "/tmp", Dir: true, Mode: 0o777 | os.ModeSticky},
		{Path: "/captf", Dir: true, Mode: 0o755},
		{Path: CABundlePath, Mode: 0o644, Source: in.CAs},
	}
	labels := meta.labels()
	labels[imagemeta.LabelContract] = contract.Version
	labels[imagemeta.LabelRuntime] = in.Runtime
	labels[imagemeta.LabelRuntimeVersion] = in.Version
	return Spec{Files: files, User: BaseUser, Entrypoint: []string{jobs.RuntimePath}, WorkingDir: "/captf",
		Env: []string{"PATH=/usr/local/bin:/usr/bin:/bin"}, Labels: labels, OS: "linux", Arch: arch}
}

// RuntimeVersion asks the runtime binary bin its version (`version
// -json`), as the base image's label records it.
func RuntimeVersion(ctx context.Context, bin string) (string, error) {
	cmd := exec.CommandContext(ctx, bin, "version", "-json")
	cmd.Env = append(os.Environ(), "CHECKPOINT_DISABLE=1") // no update check from a build
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s version -json: %w", bin, err)
	}
	var v struct {
		Version string `json:"terraform_version"`
	}
	// A warning (a CLI configuration file that is missing) may come first.
	if i := bytes.IndexByte(out, '{'); i > 0 {
		out = out[i:]
	}
	if err := json.Unmarshal(out, &v); err != nil || v.Version == "" {
		return "", fmt.Errorf("%s version -json printed no version: %q", bin, out)
	}
	return v.Version, nil
}

// BuildBases writes both module base images as OCI layouts under out
// (out/opentofu-base, out/terraform-base), each tagged with its runtime's
// version, from the runtimes and the shell of the tool cache tools
// (hack/tools: its runtimes and shell components). The tool cache holds
// binaries for this machine, so arch must be its own. It returns each
// image's digest by name.
func BuildBases(ctx context.Context, tools, out, arch string, meta Meta) (map[string]v1.Hash, error) {
	if arch != runtime.GOARCH || runtime.GOOS != "linux" {
		return nil, fmt.Errorf("the base images hold the tool cache's binaries, built for %s/%s: build them for linux/%s on such a machine", runtime.GOOS, runtime.GOARCH, arch)
	}
	if _, err := os.Stat(CABundlePath); err != nil {
		return nil, fmt.Errorf("the base images need this machine's CA bundle, for modules that reach registries: %w (install ca-certificates)", err)
	}
	shell := filepath.Join(tools, "bin", "sh")
	if _, err := os.Stat(shell); err != nil {
		return nil, fmt.Errorf("the base images need the shell of the tool cache: %w (run hack/tools/build.sh shell)", err)
	}
	digests := map[string]v1.Hash{}
	for _, name := range []string{OpenTofuBase, TerraformBase} {
		in := BaseInputs{Runtime: BaseRuntimes[name], Shell: shell, CAs: CABundlePath}
		in.Bin = filepath.Join(tools, "bin", in.Runtime)
		v, err := RuntimeVersion(ctx, in.Bin)
		if err != nil {
			return nil, fmt.Errorf("%s: %w (run hack/tools/build.sh runtimes)", name, err)
		}
		in.Version = v
		img, err := Build(BaseSpec(in, arch, meta))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if digests[name], err = WriteLayout(filepath.Join(out, name), v, img); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	return digests, nil
}
