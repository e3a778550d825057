package runner

import (
	"path/filepath"
	"sort"
	"strings"
)

// EnvDroppedMessage is logged, with the dropped names (never their values),
// when RewriteEnv removes variables the runner owns.
const EnvDroppedMessage = "Ignoring environment variables the runner owns"

// Names the runner sets or keeps in every runtime child's environment.
const (
	envHome          = "HOME"
	envTmpdir        = "TMPDIR"
	envDataDir       = "TF_DATA_DIR"
	envCLIConfigFile = "TF_CLI_CONFIG_FILE"
)

// keptOwnedNames are the only TF_* and KUBE_* names that pass through: the
// Job itself sets them.
var keptOwnedNames = map[string]bool{
	"TF_IN_AUTOMATION": true,
	"TF_INPUT":         true,
	"KUBE_NAMESPACE":   true,
}

// EnvRewrite is the environment every runtime child runs with.
type EnvRewrite struct {
	// Env holds NAME=value entries sorted by name, one per name.
	Env []string
	// Dropped holds the sorted, unique names of the TF_* and KUBE_*
	// variables that were removed or overridden. Never values.
	Dropped []string
	// Tmpdir is the TMPDIR the children see.
	Tmpdir string
	// TmpdirDefaulted is true when TMPDIR was unset or empty and now points
	// at <workdir>/tmp, which the caller must create.
	TmpdirDefaulted bool
}

// RewriteEnv rewrites the container's environment for the runtime: HOME is
// forced to workdir and TF_DATA_DIR to workdir/.terraform; TMPDIR is kept
// when set and non-empty, else workdir/tmp; TF_CLI_CONFIG_FILE is
// workdir/cli.tfrc when the image ships a provider mirror, unset otherwise;
// every other TF_* and KUBE_* variable is dropped except TF_IN_AUTOMATION,
// TF_INPUT and KUBE_NAMESPACE (TF_PLUGIN_CACHE_DIR included: it must never
// coincide with a filesystem mirror). Everything else passes through.
//
// When a name occurs more than once the last occurrence wins, as it would
// in the process environment. Entries that are not NAME=value (no '=', or
// an empty name) are not variables a child could read and are discarded.
func RewriteEnv(environ []string, workdir string, providersMirror bool) EnvRewrite {
	vars := make(map[string]string, len(environ)+4)
	dropped := map[string]bool{}
	for _, entry := range environ {
		name, value, ok := strings.Cut(entry, "=")
		if !ok || name == "" {
			continue
		}
		if runnerOwned(name) && !keptOwnedNames[name] {
			dropped[name] = true
			continue
		}
		vars[name] = value
	}

	out := EnvRewrite{Tmpdir: vars[envTmpdir]}
	if out.Tmpdir == "" {
		out.Tmpdir = filepath.Join(workdir, "tmp")
		out.TmpdirDefaulted = true
	}
	vars[envTmpdir] = out.Tmpdir
	vars[envHome] = workdir
	vars[envDataDir] = filepath.Join(workdir, ".terraform")
	if providersMirror {
		vars[envCLIConfigFile] = CLIConfigPath(workdir)
	}

	out.Env = make([]string, 0, len(vars))
	for _, name := range sortedKeys(vars) {
		out.Env = append(out.Env, name+"="+vars[name])
	}
	out.Dropped = sortedKeys(dropped)
	return out
}

// runnerOwned reports whether name belongs to the runtime or its kubernetes
// backend, so that only the runner may decide its value.
func runnerOwned(name string) bool {
	return strings.HasPrefix(name, "TF_") || strings.HasPrefix(name, "KUBE_")
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
