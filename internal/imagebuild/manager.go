package imagebuild

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"captf.io/captf/internal/filelock"
)

// The manager image's paths: the manager (config/manager runs it as the
// command) and the static runner that each Job's init container copies.
const (
	ManagerPath = "/manager"
	RunnerPath  = "/runner"
	// NonRoot is the manager's user, as the Deployment's securityContext
	// runs it.
	NonRoot = "65532:65532"
)

// Meta is what an image says of where it comes from: its OCI labels and
// what --version prints.
type Meta struct {
	Version, Revision, Source string
}

func (m Meta) labels() map[string]string {
	return map[string]string{
		"org.opencontainers.image.source":   m.Source,
		"org.opencontainers.image.revision": m.Revision,
		"org.opencontainers.image.version":  m.Version,
	}
}

// CABundlePath is where a Debian host keeps its CA bundle, and where the
// image holds it (Go looks there first), for the registries whose image
// labels the manager reads.
const CABundlePath = "/etc/ssl/certs/ca-certificates.crt"

// buildEnv is the environment of the image's go builds: the caller's (its
// module proxy and caches), with everything else that changes the binaries
// fixed, so that the digest depends on the checkout and the toolchain only.
func buildEnv(arch string) []string {
	return append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch, "GOFLAGS=", "GOEXPERIMENT=",
		"GOAMD64=v1", "GOARM64=v8.0", "GOTOOLCHAIN=local")
}

// ManagerSpec is the manager image, from its two binaries: no shell and
// no package manager, only the binaries, the CA bundle (cas, a host file),
// and the files a non-root user needs (passwd and group entries, a home,
// a sticky /tmp).
func ManagerSpec(manager, runner, cas, arch string, meta Meta) Spec {
	files := []File{
		{Path: ManagerPath, Mode: 0o755, Source: manager},
		{Path: RunnerPath, Mode: 0o755, Source: runner},
		{Path: "/etc/passwd", Mode: 0o644, Data: []byte("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n")},
		{Path: "/etc/group", Mode: 0o644, Data: []byte("root:x:0:\nnonroot:x:65532:\n")},
		{Path: "/home/nonroot", Dir: true, Mode: 0o700, UID: 65532, GID: 65532},
		{Path: "/tmp", Dir: true, Mode: 0o777 | fs.ModeSticky},
		{Path: CABundlePath, Mode: 0o644, Source: cas},
	}
	return Spec{Files: files, User: NonRoot, Entrypoint: []string{ManagerPath}, Labels: meta.labels(),
		Env: []string{"PATH=/usr/local/bin:/usr/bin:/bin"}, OS: "linux", Arch: arch}
}

// BuildManager builds the manager and the runner from the checkout at repo
// for linux/arch (ManagerImage), and writes the manager image as an OCI
// image layout at out, tagged meta.Version ("dev" when empty). The same
// checkout and toolchain give the same digest.
func BuildManager(ctx context.Context, repo, out, arch string, meta Meta) (v1.Hash, error) {
	bins, err := os.MkdirTemp("", "captf-image-")
	if err != nil {
		return v1.Hash{}, err
	}
	defer func() { _ = os.RemoveAll(bins) }()
	img, err := ManagerImage(ctx, repo, bins, arch, meta)
	if err != nil {
		return v1.Hash{}, err
	}
	tag := meta.Version
	if tag == "" {
		tag = "dev"
	}
	return WriteLayout(out, tag, img)
}

// ManagerImage builds the manager and the runner from the checkout at repo
// into the directory bins for linux/arch (static, trimmed, stamped with
// meta's version and revision; go build leaves binaries that are up to
// date as they are, and links only the others) and returns the manager
// image (ManagerSpec), held in memory. Builds into one bins directory take
// turns (its lock file, held until the image holds the binaries), so that
// processes may share one.
func ManagerImage(ctx context.Context, repo, bins, arch string, meta Meta) (v1.Image, error) {
	if _, err := os.Stat(CABundlePath); err != nil {
		return nil, fmt.Errorf("the image needs this machine's CA bundle, for the manager to verify registries: %w (install ca-certificates)", err)
	}
	if err := os.MkdirAll(bins, 0o755); err != nil {
		return nil, err
	}
	unlock, err := filelock.Lock(ctx, filepath.Join(bins, ".lock"))
	if err != nil {
		return nil, err
	}
	defer unlock()
	stamp := fmt.Sprintf("-X captf.io/captf/internal/setup.gitVersion=%s -X captf.io/captf/internal/setup.gitCommit=%s", meta.Version, meta.Revision)
	for _, b := range []struct{ pkg, ldflags string }{{"./cmd/manager", "-s -w " + stamp}, {"./cmd/runner", "-s -w"}} {
		cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=false", "-ldflags", b.ldflags,
			"-o", filepath.Join(bins, filepath.Base(b.pkg)), b.pkg)
		cmd.Dir, cmd.Env = repo, buildEnv(arch)
		if outp, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("go build %s in %s: %w\n%s", b.pkg, repo, err, strings.TrimSpace(string(outp)))
		}
	}
	return Build(ManagerSpec(filepath.Join(bins, "manager"), filepath.Join(bins, "runner"), CABundlePath, arch, meta))
}
