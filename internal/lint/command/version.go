package command

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime/debug"

	"captf.io/captf/pkg/contract"
)

// Stamped by the release build:
//
//	go build -ldflags "-X captf.io/captf/internal/lint/command.version=v0.1.0
//	  -X captf.io/captf/internal/lint/command.commit=$(git rev-parse HEAD)
//	  -X captf.io/captf/internal/lint/command.date=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
//
// Unstamped builds fall back to what the Go toolchain recorded.
var (
	version string
	commit  string
	date    string
)

// Info is what tfcapi-lint was built from and the contracts it checks.
type Info struct {
	Version  string   `json:"version"`
	Commit   string   `json:"commit"`
	Date     string   `json:"date"`
	Contract []string `json:"contract"`
}

// BuildInfo returns the stamped build, else what the toolchain recorded.
func BuildInfo() Info {
	info := Info{Version: version, Commit: commit, Date: date, Contract: []string{contract.Version}}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if info.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			info.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch {
			case s.Key == "vcs.revision" && info.Commit == "":
				info.Commit = s.Value
			case s.Key == "vcs.time" && info.Date == "":
				info.Date = s.Value
			}
		}
	}
	for _, f := range []*string{&info.Version, &info.Commit, &info.Date} {
		if *f == "" {
			*f = "unknown"
		}
	}
	return info
}

func printVersion(w io.Writer, asJSON bool) error {
	info := BuildInfo()
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(info)
	}
	_, err := fmt.Fprintf(w, "tfcapi-lint %s (commit %s, built %s), contract %s\n", info.Version, info.Commit, info.Date, contract.Version)
	return err
}
