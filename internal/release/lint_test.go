package release

import (
	"bufio"
	"context"
	"debug/macho"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// The released tfcapi-lint runs and says its version; the other
// platforms' binaries are of their platform; the checksums match.
func TestBuildLint(t *testing.T) {
	if testing.Short() {
		t.Skip("cross-compiles tfcapi-lint")
	}
	dir := t.TempDir()
	native := "linux/" + runtime.GOARCH
	files, err := BuildLint(context.Background(), filepath.Join("..", ".."), "v0.1.0", dir, []string{native, "darwin/arm64"})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 3 {
		t.Fatalf("files %q, want two binaries and the checksums", files)
	}
	out, err := exec.Command(filepath.Join(dir, LintBinary(native)), "version", "--json").Output()
	if err != nil {
		t.Fatalf("released tfcapi-lint version --json: %v", err)
	}
	var info struct{ Version, Commit, Date string }
	if err := json.Unmarshal(out, &info); err != nil || info.Version != "v0.1.0" || info.Commit == "" {
		t.Errorf("version --json: %s (%v), want version v0.1.0 and a commit", out, err)
	}
	m, err := macho.Open(filepath.Join(dir, "tfcapi-lint-darwin-arm64"))
	if err != nil {
		t.Fatalf("tfcapi-lint-darwin-arm64 is not a Mach-O file: %v", err)
	}
	if m.Cpu != macho.CpuArm64 {
		t.Errorf("tfcapi-lint-darwin-arm64 is for %v", m.Cpu)
	}
	_ = m.Close()
	f, err := os.Open(filepath.Join(dir, LintChecksumsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	lines := 0
	for s := bufio.NewScanner(f); s.Scan(); lines++ {
		sum, name, ok := strings.Cut(s.Text(), "  ")
		got, err := fileSum(filepath.Join(dir, name))
		if !ok || err != nil || got != sum {
			t.Errorf("checksum line %q does not match %s (%v)", s.Text(), got, err)
		}
	}
	if lines != 2 {
		t.Errorf("%d checksum lines, want 2", lines)
	}
	if _, err := BuildLint(context.Background(), "..", "1.0", dir, LintPlatforms); err == nil {
		t.Error("BuildLint took version 1.0")
	}
}
