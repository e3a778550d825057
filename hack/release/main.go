// Command release writes a CAPTF release: the clusterctl provider
// repository (see internal/release) and the tfcapi-lint binaries of every
// released platform with their checksums. `make release VERSION=vX.Y.Z`
// runs it:
//
//	go run ./hack/release --version vX.Y.Z [--out out/repository] [--lint-out out/tfcapi-lint]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"captf.io/captf/internal/release"
)

func main() {
	version := flag.String("version", "", "the release's version: vX.Y.Z or vX.Y.Z-rc.N")
	out := flag.String("out", "out/repository", "the clusterctl repository's root directory")
	lintOut := flag.String("lint-out", "out/tfcapi-lint", "where the tfcapi-lint binaries go, in a directory per version")
	repo := flag.String("repo", ".", "the CAPTF checkout")
	flag.Parse()
	dir, err := release.Render(release.Options{Repo: *repo, Version: *version, Out: *out})
	if err != nil {
		fmt.Fprintf(os.Stderr, "release: %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("wrote %s\n", dir)
	lintDir := filepath.Join(*lintOut, *version)
	files, err := release.BuildLint(context.Background(), *repo, *version, lintDir, release.LintPlatforms)
	if err != nil {
		fmt.Fprintf(os.Stderr, "release: %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("wrote %d tfcapi-lint files in %s\n", len(files), lintDir)
}
