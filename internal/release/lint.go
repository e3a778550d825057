package release

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// LintPlatforms are the platforms tfcapi-lint is released for.
var LintPlatforms = []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64"}

// LintChecksumsFile lists the sha256 of each tfcapi-lint binary of a
// release, in `sha256sum -c` format.
const LintChecksumsFile = "tfcapi-lint-checksums.txt"

// lintPackage is where tfcapi-lint's version is stamped.
const lintPackage = "captf.io/captf/internal/lint/command"

// LintBinary is the name of the tfcapi-lint binary of a platform
// ("linux/amd64"): tfcapi-lint-linux-amd64.
func LintBinary(platform string) string {
	return "tfcapi-lint-" + strings.ReplaceAll(platform, "/", "-")
}

// BuildLint cross-compiles tfcapi-lint from the checkout repo for each
// platform into dir, stamped with version and with the commit and commit
// time of the checkout's HEAD (so that the same tree builds the same
// bytes), and writes LintChecksumsFile. It returns the files written.
func BuildLint(ctx context.Context, repo, version, dir string, platforms []string) ([]string, error) {
	if !versionPattern.MatchString(version) {
		return nil, fmt.Errorf("VERSION %q is not a release version: use vX.Y.Z or vX.Y.Z-rc.N", version)
	}
	commit, date := gitHead(ctx, repo)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	ldflags := fmt.Sprintf("-s -w -X %[1]s.version=%[2]s -X %[1]s.commit=%[3]s -X %[1]s.date=%[4]s", lintPackage, version, commit, date)
	var sums strings.Builder
	var files []string
	for _, p := range platforms {
		goos, goarch, ok := strings.Cut(p, "/")
		if !ok {
			return nil, fmt.Errorf("platform %q: want os/arch", p)
		}
		name := LintBinary(p)
		out := filepath.Join(dir, name)
		build := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=false", "-ldflags", ldflags, "-o", out, "./cmd/tfcapi-lint")
		build.Dir = repo
		build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+goos, "GOARCH="+goarch)
		if msg, err := build.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("building %s: %w\n%s", name, err, msg)
		}
		sum, err := fileSum(out)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&sums, "%s  %s\n", sum, name)
		files = append(files, out)
	}
	path := filepath.Join(dir, LintChecksumsFile)
	if err := os.WriteFile(path, []byte(sums.String()), 0o644); err != nil {
		return nil, err
	}
	return append(files, path), nil
}

// gitHead returns the commit and commit time of repo's HEAD, or
// "unknown" outside a git checkout.
func gitHead(ctx context.Context, repo string) (commit, date string) {
	out, err := exec.CommandContext(ctx, "git", "-C", repo, "log", "-1", "--format=%H %cI").Output()
	if err != nil {
		return "unknown", "unknown"
	}
	commit, date, _ = strings.Cut(strings.TrimSpace(string(out)), " ")
	return commit, date
}

func fileSum(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer func() { _ = f.Close() }()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
