package contract

import "strings"

// ModuleFileSuffixes are the suffixes of the files both runtimes read as
// a module's configuration, the JSON ones first (so that "x.tf.json" is
// not taken for a file of base name "x.tf").
var ModuleFileSuffixes = []string{".tofu.json", ".tf.json", ".tofu", ".tf"}

// ModuleFileSuffix returns the suffix of ModuleFileSuffixes a file named
// name is read for, or "" when the runtimes do not read it: another
// suffix, or a name they ignore (starting with a dot, ending with a tilde,
// or between hashes, as editors leave them).
func ModuleFileSuffix(name string) string {
	if strings.HasPrefix(name, ".") || strings.HasSuffix(name, "~") ||
		(len(name) > 1 && strings.HasPrefix(name, "#") && strings.HasSuffix(name, "#")) {
		return ""
	}
	for _, s := range ModuleFileSuffixes {
		if strings.HasSuffix(name, s) && len(name) > len(s) {
			return s
		}
	}
	return ""
}

// IsModuleFile tells whether the runtimes read a file named name as a
// module's configuration (see ModuleFileSuffix).
func IsModuleFile(name string) bool { return ModuleFileSuffix(name) != "" }
