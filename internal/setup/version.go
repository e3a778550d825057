package setup

import (
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"strconv"

	"k8s.io/apimachinery/pkg/util/version"

	"captf.io/captf/pkg/contract"
)

// Stamped by the release build:
//
//	go build -ldflags "-X captf.io/captf/internal/setup.gitVersion=v0.1.0
//	  -X captf.io/captf/internal/setup.gitCommit=$(git rev-parse HEAD)
//	  -X captf.io/captf/internal/setup.gitTreeState=clean
//	  -X captf.io/captf/internal/setup.buildDate=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
//
// Unstamped builds fall back to what the Go toolchain recorded.
var (
	gitVersion   string
	gitCommit    string
	gitTreeState string
	buildDate    string
)

// BuildInfo is what the manager was built from, printed by --version and
// exported as captf_build_info.
type BuildInfo struct {
	Version   string
	Commit    string
	TreeState string
	BuildDate string
	GoVersion string
	Compiler  string
	Platform  string
	// Contract is the module contract version the manager implements.
	Contract string
}

// Build returns the stamped build information, else what the Go toolchain
// recorded (module version, VCS revision and time), else "unknown".
func Build() BuildInfo {
	b := BuildInfo{
		Version: gitVersion, Commit: gitCommit, TreeState: gitTreeState, BuildDate: buildDate,
		GoVersion: runtime.Version(), Compiler: runtime.Compiler, Platform: runtime.GOOS + "/" + runtime.GOARCH,
		Contract: contract.Version,
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if b.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			b.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch {
			case s.Key == "vcs.revision" && b.Commit == "":
				b.Commit = s.Value
			case s.Key == "vcs.time" && b.BuildDate == "":
				b.BuildDate = s.Value
			case s.Key == "vcs.modified" && b.TreeState == "":
				b.TreeState = map[string]string{"true": "dirty", "false": "clean"}[s.Value]
			}
		}
	}
	for _, f := range []*string{&b.Version, &b.Commit, &b.TreeState, &b.BuildDate} {
		if *f == "" {
			*f = "unknown"
		}
	}
	return b
}

// String is the one-line form --version prints.
func (b BuildInfo) String() string {
	return fmt.Sprintf("CAPTF manager %s (commit %s, tree %s, built %s, %s %s, module contract %s)",
		b.Version, b.Commit, b.TreeState, b.BuildDate, b.GoVersion, b.Platform, b.Contract)
}

// Raw is the form --version=raw prints: every field, Go syntax.
func (b BuildInfo) Raw() string {
	return fmt.Sprintf("%#v", b)
}

// Build is Build() with the version --version=vX.Y.Z reports instead.
func (o *Options) Build() BuildInfo {
	b := Build()
	if v := o.Version.Override(); v != "" {
		b.Version = v
	}
	return b
}

// VersionFlag is the --version flag: false (run), true (print the version
// and exit), raw (print the raw build stamp and exit) or vX.Y.Z (run,
// reporting that version). A bare --version means true.
type VersionFlag struct {
	value string
}

// Version flag values.
const (
	versionFalse = "false"
	versionTrue  = "true"
	versionRaw   = "raw"
)

func (v *VersionFlag) String() string {
	if v.value == "" {
		return versionFalse
	}
	return v.value
}

// Set accepts true, false, raw or a semantic version starting with v.
func (v *VersionFlag) Set(s string) error {
	if s == versionRaw {
		v.value = s
		return nil
	}
	if len(s) > 0 && s[0] == 'v' {
		if _, err := version.ParseSemantic(s); err != nil {
			return fmt.Errorf("%q is not a semantic version such as v1.2.3", s)
		}
		v.value = s
		return nil
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		return errors.New("want true, false, raw or a version such as v1.2.3")
	}
	v.value = strconv.FormatBool(b)
	return nil
}

// Type names the flag's type in --help.
func (v *VersionFlag) Type() string { return "version" }

// Print reports whether the manager should print its version and exit,
// and in which form (raw or not).
func (v *VersionFlag) Print() (print, raw bool) {
	return v.value == versionTrue || v.value == versionRaw, v.value == versionRaw
}

// Override is the version --version=vX.Y.Z reports, or "".
func (v *VersionFlag) Override() string {
	if len(v.value) > 0 && v.value[0] == 'v' {
		return v.value
	}
	return ""
}
