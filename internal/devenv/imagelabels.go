package devenv

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"strings"

	"captf.io/captf/internal/imagemeta"
	"captf.io/captf/internal/localnode"
	"captf.io/captf/pkg/contract"
)

// exampleCapacity is what the example machine modules declare with the
// image recipe's CAPACITY and NODE_INFO build arguments: the size of the
// machines the autoscaler would add.
var exampleCapacity = map[string][2]string{
	"noop-machine": {`{"cpu":"2","memory":"4Gi"}`, `{"architecture":"amd64","operatingSystem":"linux"}`},
}

// ModuleImage is a local image of the module in dir on runtime rt, laid
// out from the host's files (its binary and the provider mirror taken
// from tools) rather than built: what tests give the local node for their
// own modules. It is labelled as an example module's image: the contract,
// the runtime, the role when the module's name ends with it, and an
// example machine module's capacity.
func ModuleImage(dir, rt, tools string) localnode.Image {
	img := localnode.ModuleImage(dir, filepath.Join(tools, "bin", rt), filepath.Join(tools, "providers"))
	img.Labels = map[string]string{imagemeta.LabelContract: "v1alpha1", imagemeta.LabelRuntime: rt}
	if role := exampleRole(filepath.Base(dir)); role != "" {
		img.Labels[imagemeta.LabelRole] = string(role)
	}
	maps.Copy(img.Labels, exampleLabels(filepath.Base(dir)))
	return img
}

// exampleRoles are the roles of the example modules whose names do not
// end with their role.
var exampleRoles = map[string]contract.Role{"slow": contract.RoleMachine}

// exampleRole is the role of an example module: the end of its name
// (noop-machine), else exampleRoles', else none.
func exampleRole(name string) contract.Role {
	if role, ok := exampleRoles[name]; ok {
		return role
	}
	for _, role := range []contract.Role{contract.RoleMachinePool, contract.RoleMachine, contract.RoleCluster} {
		if strings.HasSuffix(name, "-"+string(role)) {
			return role
		}
	}
	return ""
}

// exampleLabels are the labels an example module's image recipe adds
// with build arguments: an example machine's capacity.
func exampleLabels(name string) map[string]string {
	c, ok := exampleCapacity[name]
	if !ok {
		return nil
	}
	return map[string]string{"io.captf.capacity": c[0], "io.captf.node-info": c[1]}
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
