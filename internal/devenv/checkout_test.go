package devenv

import (
	"os"
	"path/filepath"
	"testing"
)

// A checkout is told by its go.mod and its tool build script; another
// module with the same script, or the script alone, is not one.
func TestIsCheckout(t *testing.T) {
	if !IsCheckout(filepath.Join("..", "..")) {
		t.Error("the repository is not taken for a checkout")
	}
	other := t.TempDir()
	if err := os.MkdirAll(filepath.Join(other, "hack", "tools"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "hack", "tools", "build.sh"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if IsCheckout(other) {
		t.Error("a directory with the script and no go.mod is taken for a checkout")
	}
	if err := os.WriteFile(filepath.Join(other, "go.mod"), []byte("module example.com/captf-fork\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if IsCheckout(other) {
		t.Error("another module is taken for a checkout")
	}
	if err := os.WriteFile(filepath.Join(other, "go.mod"), []byte("// a fork\nmodule \"captf.io/captf\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if !IsCheckout(other) {
		t.Error("a tree with CAPTF's go.mod and the script is not taken for a checkout")
	}
}
