// Command images builds CAPTF's images as OCI image layouts, without a
// container daemon (see internal/imagebuild). `make images` runs it:
//
//	go run ./hack/images [--out out/images] [--arch amd64] [--version v0.1.0] [--revision <commit>] [--source <url>]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"captf.io/captf/internal/imagebuild"
)

func main() {
	out := flag.String("out", "out/images", "where each image's layout is written (<out>/manager)")
	repo := flag.String("repo", ".", "the CAPTF checkout")
	arch := flag.String("arch", runtime.GOARCH, "the images' architecture (linux/<arch>)")
	var meta imagebuild.Meta
	flag.StringVar(&meta.Version, "version", "", "org.opencontainers.image.version, what --version prints, and the layout's tag (dev when empty)")
	flag.StringVar(&meta.Revision, "revision", "", "org.opencontainers.image.revision: the commit")
	flag.StringVar(&meta.Source, "source", "https://github.com/captf-io/cluster-api-provider-terraform", "org.opencontainers.image.source")
	flag.Parse()
	dir := filepath.Join(*out, "manager")
	digest, err := imagebuild.BuildManager(context.Background(), *repo, dir, *arch, meta)
	if err != nil {
		fmt.Fprintf(os.Stderr, "images: %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("wrote %s (linux/%s, %s)\n", dir, *arch, digest)
}
