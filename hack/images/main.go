// Command images builds CAPTF's images as OCI image layouts, without a
// container daemon (see internal/imagebuild): the manager image and the
// module base images (opentofu-base, terraform-base). `make images` runs
// it:
//
//	go run ./hack/images --tools DIR [--out out/images] [--arch amd64] [--version v0.1.0] [--revision <commit>] [--source <url>]
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
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "images: %v\n", err)
		os.Exit(1)
	}
}

func run() error {
	out := flag.String("out", "out/images", "where each image's layout is written (<out>/manager, <out>/opentofu-base, <out>/terraform-base)")
	repo := flag.String("repo", ".", "the CAPTF checkout")
	tools := flag.String("tools", "", "the tool cache (hack/tools/build.sh --print-dir) whose runtimes and shell the base images hold; empty builds the manager image only")
	arch := flag.String("arch", runtime.GOARCH, "the images' architecture (linux/<arch>)")
	var meta imagebuild.Meta
	flag.StringVar(&meta.Version, "version", "", "org.opencontainers.image.version, what --version prints, and the manager layout's tag (dev when empty)")
	flag.StringVar(&meta.Revision, "revision", "", "org.opencontainers.image.revision: the commit")
	flag.StringVar(&meta.Source, "source", "https://github.com/captf-io/cluster-api-provider-terraform", "org.opencontainers.image.source")
	flag.Parse()
	ctx := context.Background()
	dir := filepath.Join(*out, "manager")
	digest, err := imagebuild.BuildManager(ctx, *repo, dir, *arch, meta)
	if err != nil {
		return err
	}
	fmt.Printf("wrote %s (linux/%s, %s)\n", dir, *arch, digest)
	if *tools == "" {
		return nil
	}
	if *arch != runtime.GOARCH {
		fmt.Printf("skipped the module base images: they hold the tool cache's binaries, built for linux/%s\n", runtime.GOARCH)
		return nil
	}
	bases, err := imagebuild.BuildBases(ctx, *tools, *out, *arch, meta)
	if err != nil {
		return err
	}
	for _, name := range []string{imagebuild.OpenTofuBase, imagebuild.TerraformBase} {
		fmt.Printf("wrote %s (linux/%s, %s)\n", filepath.Join(*out, name), *arch, bases[name])
	}
	return nil
}
