package devenv

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
)

// ModulePath is CAPTF's Go module.
const ModulePath = "captf.io/captf"

// FindCheckout returns the CAPTF source tree captf-dev builds its tools,
// the runner and the example images from, and reads its manifests from:
// given, when set; else the current directory, when it is a CAPTF
// checkout; else the module source of the version this binary was
// installed at (`go install captf.io/captf/cmd/captf-dev@<version>`),
// which the Go module cache holds (`go mod download` fetches it when it
// does not).
func FindCheckout(ctx context.Context, given string) (string, error) {
	if given != "" {
		return given, nil
	}
	if IsCheckout(".") {
		return ".", nil
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok || bi.Main.Path != ModulePath || bi.Main.Version == "" || bi.Main.Version == "(devel)" {
		return "", errors.New("this directory is not a CAPTF checkout, and this captf-dev was built from one rather than installed at a version: run it in a checkout, give --repo, or install it with `go install captf.io/captf/cmd/captf-dev@<version>`")
	}
	return ModuleSource(ctx, bi.Main.Version)
}

// ModuleSource returns the directory of CAPTF's module source at version
// in the Go module cache, downloading it when missing.
func ModuleSource(ctx context.Context, version string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", ModulePath+"@"+version)
	cmd.Dir = os.TempDir() // outside any module, whatever the working directory
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var dl struct{ Dir, Error string }
	if jerr := json.Unmarshal(out, &dl); jerr == nil && dl.Error != "" {
		return "", fmt.Errorf("finding the source of %s@%s: %s", ModulePath, version, dl.Error)
	}
	if err != nil {
		return "", fmt.Errorf("finding the source of %s@%s (go mod download): %w: %s", ModulePath, version, err, strings.TrimSpace(stderr.String()))
	}
	if dl.Dir == "" || !IsCheckout(dl.Dir) {
		return "", fmt.Errorf("the module cache's %s@%s (%q) is not a CAPTF source tree", ModulePath, version, dl.Dir)
	}
	return dl.Dir, nil
}

// IsCheckout tells whether dir holds CAPTF's source: its go.mod, and the
// tool build script.
func IsCheckout(dir string) bool {
	if _, err := os.Stat(filepath.Join(dir, "hack", "tools", "build.sh")); err != nil {
		return false
	}
	f, err := os.Open(filepath.Join(dir, "go.mod"))
	if err != nil {
		return false
	}
	defer func() { _ = f.Close() }()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(s.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`) == ModulePath
		}
	}
	return false
}
