package devenv

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"time"

	"github.com/go-logr/logr"

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

// ExampleImages are what the module images of examples/modules hold, for
// both runtimes: each module directory of the checkout, the runtime and
// the provider mirror of the tool cache (BuildImages writes them to the
// image store).
func ExampleImages(repo, tools string) (map[string]localnode.Image, error) {
	dir := filepath.Join(repo, "examples", "modules")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	providers := filepath.Join(tools, "providers")
	if !isDir(providers) {
		return nil, fmt.Errorf("the provider mirror %s is missing: run `make tools`", providers)
	}
	images := map[string]localnode.Image{}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		for _, rt := range RuntimeNames {
			bin := filepath.Join(tools, "bin", rt)
			if _, err := os.Stat(bin); err != nil {
				return nil, fmt.Errorf("%s is missing: run `make tools`", bin)
			}
			images[ExampleImage(e.Name(), rt)] = ModuleImage(filepath.Join(dir, e.Name()), rt, tools)
		}
	}
	return images, nil
}

// nodeDir is where the local node keeps its files (pod logs included).
func nodeDir(stateDir string) string { return filepath.Join(stateDir, "node") }

// ReadLog returns the kept log of a pod (or of a Job's newest pod) of the
// environment whose state directory is stateDir; see localnode.ReadLog.
func ReadLog(stateDir, namespace, pod, container string) ([]byte, error) {
	return localnode.ReadLog(nodeDir(stateDir), namespace, pod, container)
}

// startNode starts the node that runs the environment's pods: as real
// processes in private mount namespaces, with the runner built from this
// checkout, where this process can make them (root on Linux); in-process
// otherwise, which it says. The node pulls the example module images from
// the image store, brought up to date first, and has the extra images and
// the runner's in memory.
func (e *Env) startNode(ctx context.Context, out io.Writer, nodeLog logr.Logger, want localnode.Mode, extra map[string]localnode.Image) error {
	store, err := DefaultImageStore()
	if err != nil {
		return err
	}
	start := time.Now()
	built, err := BuildImages(store, e.Repo, e.Tools, nil)
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
		fmt.Fprintln(out, "Building the runner (go build ./cmd/runner)")
		bin, err := buildRunner(ctx, e.Repo, filepath.Join(e.StateDir, "bin"))
		if err != nil {
			return err
		}
		images[RunnerImage] = localnode.RunnerImage(bin)
		mode = localnode.ModeNamespace
		fmt.Fprintf(out, "Starting the local node (runner built in %s): each container runs as a process in its own mount namespace, at the paths its pod gives it\n",
			time.Since(start).Round(100*time.Millisecond))
	}
	node, err := localnode.Start(ctx, localnode.Options{
		Kubeconfig: e.Kubeconfig, NodeName: NodeName, Images: images, ImageStore: store,
		StateDir: nodeDir(e.StateDir), Mode: mode, Log: nodeLog,
	})
	if err != nil {
		return err
	}
	e.Node = node
	return nil
}

// buildRunner builds cmd/runner statically into dir, as the manager's
// image holds it.
func buildRunner(ctx context.Context, repo, dir string) (string, error) {
	bin := filepath.Join(dir, "runner")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/runner")
	cmd.Dir, cmd.Env = repo, append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the runner (go build ./cmd/runner in %s): %w\n%s", repo, err, out)
	}
	return bin, nil
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

func sortedRefs(images map[string]localnode.Image) []string {
	refs := make([]string, 0, len(images))
	for ref := range images {
		refs = append(refs, ref)
	}
	sort.Strings(refs)
	return refs
}
