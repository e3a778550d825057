// Command release writes a CAPTF release as a clusterctl provider
// repository (see internal/release). `make release VERSION=vX.Y.Z` runs it:
//
//	go run ./hack/release --version vX.Y.Z [--out out/repository]
package main

import (
	"flag"
	"fmt"
	"os"

	"captf.io/captf/internal/release"
)

func main() {
	version := flag.String("version", "", "the release's version: vX.Y.Z or vX.Y.Z-rc.N")
	out := flag.String("out", "out/repository", "the clusterctl repository's root directory")
	repo := flag.String("repo", ".", "the CAPTF checkout")
	flag.Parse()
	dir, err := release.Render(release.Options{Repo: *repo, Version: *version, Out: *out})
	if err != nil {
		fmt.Fprintf(os.Stderr, "release: %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("wrote %s\n", dir)
}
