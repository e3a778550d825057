package devenv

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"captf.io/captf/internal/imagemeta"
	"captf.io/captf/internal/localnode"
)

// exampleCapacity is what the example machine modules declare with the
// image recipe's CAPACITY and NODE_INFO build arguments: the size of the
// machines the autoscaler would add.
var exampleCapacity = map[string][2]string{
	"noop-machine": {`{"cpu":"2","memory":"4Gi"}`, `{"architecture":"amd64","operatingSystem":"linux"}`},
}

// ModuleImage is the local image of the module in dir on runtime rt (its
// binary and the provider mirror taken from tools), labelled as the image
// recipe (images/module/Containerfile) labels it: the contract, the
// runtime, the role when the module's name ends with it, and an example
// machine module's capacity.
func ModuleImage(dir, rt, tools string) localnode.Image {
	img := localnode.ModuleImage(dir, filepath.Join(tools, "bin", rt), filepath.Join(tools, "providers"))
	img.Labels = map[string]string{imagemeta.LabelContract: "v1alpha1", imagemeta.LabelRuntime: rt}
	base := filepath.Base(dir)
	for _, role := range []string{"machinepool", "machine", "cluster"} {
		if strings.HasSuffix(base, "-"+role) {
			img.Labels[imagemeta.LabelRole] = role
			break
		}
	}
	if c, ok := exampleCapacity[base]; ok {
		img.Labels["io.captf.capacity"], img.Labels["io.captf.node-info"] = c[0], c[1]
	}
	return img
}

// imageLabels serves the labels of the local images, as a registry
// serves an image's config: the extra images' own, else the image
// store's.
func imageLabels(store string, extra map[string]localnode.Image) imagemeta.Reader {
	return imagemeta.Func(func(_ context.Context, ref string) (map[string]string, error) {
		if img, ok := extra[ref]; ok {
			return img.Labels, nil
		}
		labels, err := localnode.ImageLabels(store, ref)
		if errors.Is(err, localnode.ErrNoImage) {
			return nil, fmt.Errorf("%w: the local image store has no %s", imagemeta.ErrUnknownImage, ref)
		}
		return labels, err
	})
}
