package devenv

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/go-logr/logr"

	"captf.io/captf/internal/imagebuild"
	"captf.io/captf/internal/localnode"
)

// NodeName is the name of the environment's one Node.
const NodeName = "captf-dev"

// RuntimeNames are the runtimes every example module image exists for.
var RuntimeNames = []string{"tofu", "terraform"}

// ExampleImage is the reference of an example module's image on the local
// node: local/<module>:<runtime>.
func ExampleImage(module, runtime string) string {
	return "local/" + module + ":" + runtime
}

// nodeDir is where the local node keeps its files (pod logs included).
func nodeDir(stateDir string) string { return filepath.Join(stateDir, "node") }

// ReadLog returns the kept log of a pod (or of a Job's newest pod) of the
// environment whose state directory is stateDir; see localnode.ReadLog.
func ReadLog(stateDir, namespace, pod, container string) ([]byte, error) {
	return localnode.ReadLog(nodeDir(stateDir), namespace, pod, container)
}

// startNode starts the node that runs the environment's pods: as real
// processes in private mount namespaces where this process can make them
// (root on Linux), in-process otherwise, which it says. The images are
// those users run: the node pulls the example module images, built over
// the module base images (BuildImages), from the image store, and has the
// manager image built from this checkout (whose /runner each Job's init
// container copies) and the extra images in memory.
func (e *Env) startNode(ctx context.Context, out io.Writer, nodeLog logr.Logger, want localnode.Mode, maxPods int, extra map[string]localnode.Image) error {
	store, err := DefaultImageStore()
	if err != nil {
		return err
	}
	start := time.Now()
	built, err := BuildImages(ctx, store, e.Repo, e.Tools, func(b BuiltImage) {
		if b.Changed {
			fmt.Fprintf(out, "  built %s (%s)\n", b.Ref, time.Since(start).Round(100*time.Millisecond))
		}
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Module images: %s in %s (%s)\n", imagesSummary(built), store, time.Since(start).Round(10*time.Millisecond))
	images := map[string]localnode.Image{}
	for ref, img := range extra {
		images[ref] = img
	}
	why := localnode.NamespaceSupport()
	if want == localnode.ModeInProcess {
		why = fmt.Errorf("asked for %s", want)
	}
	mode := localnode.ModeInProcess
	if why != nil && want == localnode.ModeNamespace {
		return fmt.Errorf("the local node cannot run in %s mode: %w", want, why)
	}
	if why != nil {
		fmt.Fprintf(out, "Starting the local node: Job pods run in this process, paths moved into a directory per pod (%v)\n", why)
	} else {
		start := time.Now()
		fmt.Fprintln(out, "Building the manager image (as `make images` does)")
		runner, err := e.managerImage(ctx)
		if err != nil {
			return err
		}
		images[RunnerImage] = runner
		mode = localnode.ModeNamespace
		fmt.Fprintf(out, "Starting the local node (manager image %s built in %s): each container runs as a process in its own mount namespace, at the paths its pod gives it\n",
			runner.Digest, time.Since(start).Round(100*time.Millisecond))
	}
	node, err := localnode.Start(ctx, localnode.Options{
		Kubeconfig: e.Kubeconfig, NodeName: NodeName, Images: images, ImageStore: store,
		StateDir: nodeDir(e.StateDir), Mode: mode, MaxPods: maxPods, Log: nodeLog,
	})
	if err != nil {
		return err
	}
	e.Node = node
	return nil
}

// managerImage builds the manager image from the checkout, as `make
// images` does (imagebuild.ManagerImage), and unpacks it in the
// environment's state directory: the image whose /runner the init
// container of every Job copies. It is the environment's own, in memory,
// so that two environments of two checkouts never run each other's. Its
// binaries are linked in the machine's directory beside the image store
// (ManagerBinaries), where go build leaves them as they are while they
// are up to date: environments started one after another, or side by
// side, from one checkout link them once.
func (e *Env) managerImage(ctx context.Context) (localnode.Image, error) {
	bins, err := ManagerBinaries()
	if err != nil {
		return localnode.Image{}, err
	}
	img, err := imagebuild.ManagerImage(ctx, e.Repo, bins, runtime.GOARCH, imagebuild.Meta{Version: "dev"})
	if err != nil {
		return localnode.Image{}, fmt.Errorf("building the manager image: %w", err)
	}
	root := filepath.Join(e.StateDir, "images", "manager")
	if err := os.RemoveAll(root); err != nil {
		return localnode.Image{}, err
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return localnode.Image{}, err
	}
	return localnode.UnpackImage(img, root)
}

// imagesSummary says how many images were rebuilt: "8 up to date", "2 of 8
// rebuilt".
func imagesSummary(built []BuiltImage) string {
	changed := 0
	for _, b := range built {
		if b.Changed {
			changed++
		}
	}
	if changed == 0 {
		return fmt.Sprintf("%d up to date", len(built))
	}
	return fmt.Sprintf("%d of %d rebuilt", changed, len(built))
}
