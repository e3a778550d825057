package runner

import (
	"fmt"
	"os"
	"strings"
)

// moduleSuffixes are the file suffixes that make a directory a module.
var moduleSuffixes = []string{".tf", ".tf.json", ".tofu", ".tofu.json"}

// CheckLayout checks the image contract's two required paths before any
// command runs: the module directory holds a module file at its top level,
// and the runtime is an executable file.
func CheckLayout(module, runtime string) error {
	entries, err := os.ReadDir(module)
	if err != nil {
		return fmt.Errorf("the module directory %s cannot be read: %w", module, err)
	}
	found := false
	for _, e := range entries {
		if e.Type().IsDir() {
			continue
		}
		for _, s := range moduleSuffixes {
			found = found || strings.HasSuffix(e.Name(), s)
		}
	}
	if !found {
		return fmt.Errorf("%s has no .tf, .tf.json, .tofu or .tofu.json file at its top level", module)
	}
	st, err := os.Stat(runtime) // follows a symlink, as exec does
	switch {
	case err != nil:
		return fmt.Errorf("the runtime %s is missing: %w", runtime, err)
	case !st.Mode().IsRegular():
		return fmt.Errorf("the runtime %s is not a regular file", runtime)
	case st.Mode().Perm()&0o111 == 0:
		return fmt.Errorf("the runtime %s is not executable", runtime)
	}
	return nil
}
