package devenv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"captf.io/captf/internal/localnode"
	"captf.io/captf/pkg/contract"
)

// DemoModules are a module author's own modules the demo runs instead of
// the examples, by role: a module directory to build (Dirs), or an image
// already in the image store (Images).
type DemoModules struct {
	Dirs, Images map[contract.Role]string
	// Runtime is the base image of the directories: tofu or terraform.
	Runtime string
	// Tools is the tool cache; Store the image store; Layouts where the
	// OCI layouts of the directories' images are written.
	Tools, Store, Layouts string
}

// PrepareDemoModules builds the image of each module directory into the
// image store (BuildModuleImage) and lints it (LintImage, the report
// printed to out), and checks that each image named is in the store. It
// returns the image of each role, for Env.DemoImages; an image that
// breaks the module contract stops the demo before it starts.
func PrepareDemoModules(ctx context.Context, out io.Writer, m DemoModules) (map[contract.Role]string, error) {
	images := map[contract.Role]string{}
	for _, role := range contract.Roles {
		if ref, ok := m.Images[role]; ok {
			if _, err := localnode.ImageLabels(m.Store, ref); err != nil {
				if errors.Is(err, localnode.ErrNoImage) {
					return nil, fmt.Errorf("--%s-image %s: the image store %s has no such image: import it first (captf-dev images import)", role, ref, m.Store)
				}
				return nil, err
			}
			images[role] = ref
			continue
		}
		dir, ok := m.Dirs[role]
		if !ok {
			continue
		}
		fmt.Fprintf(out, "Building the %s module %s on %s\n", role, dir, m.Runtime)
		built, err := BuildModuleImage(ctx, ModuleImageOptions{
			Module: dir, Role: role, Runtime: m.Runtime, Tools: m.Tools, Store: m.Store,
			Layout: filepath.Join(m.Layouts, repoName(dir)+"-"+m.Runtime),
		})
		if err != nil {
			return nil, err
		}
		report, err := LintImage(ctx, built.Layout, role)
		if err != nil {
			return nil, fmt.Errorf("linting the image of %s: %w", dir, err)
		}
		fmt.Fprintf(out, "  %s@%s\n", built.Ref, built.Digest)
		if err := report.WriteText(out); err != nil {
			return nil, err
		}
		if report.Summary.Error > 0 {
			return nil, fmt.Errorf("the %s module %s breaks the module contract (errors above): fix them, then run the demo again", role, dir)
		}
		images[role] = built.Ref
	}
	return images, nil
}
