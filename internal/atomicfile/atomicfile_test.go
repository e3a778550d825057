package atomicfile_test

import (
	"os"
	"path/filepath"
	"testing"

	"captf.io/captf/internal/atomicfile"
)

// Write replaces what was there with the new content and mode, and
// leaves no temporary file behind; a missing directory is an error.
func TestWrite(t *testing.T) {
	if err := atomicfile.Write(filepath.Join(t.TempDir(), "missing", "file"), []byte("x"), 0o644); err == nil {
		t.Error("writing into a missing directory succeeded")
	}
	p := filepath.Join(t.TempDir(), "file")
	for _, content := range []string{"first", "second, longer"} {
		if err := atomicfile.Write(p, []byte(content), 0o640); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(p)
		if err != nil || string(data) != content {
			t.Fatalf("read %q (%v), want %q", data, err, content)
		}
	}
	if st, err := os.Stat(p); err != nil || st.Mode().Perm() != 0o640 {
		t.Errorf("mode %v (%v), want 0640", st.Mode(), err)
	}
	entries, err := os.ReadDir(filepath.Dir(p))
	if err != nil || len(entries) != 1 {
		t.Errorf("the directory holds %v (%v), want the file alone", entries, err)
	}
}
