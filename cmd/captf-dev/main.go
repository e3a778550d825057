// Command captf-dev runs CAPTF's embedded local environment: a real control
// plane on this machine (built from the Go module proxy by hack/tools), the
// Cluster API and CAPTF managers, and a local node that runs the Jobs.
//
//	captf-dev [--tools DIR] [--repo DIR] [--node-mode namespace|in-process] up [--kubeconfig PATH] [--without-manager]
//	captf-dev manager [--kubeconfig PATH] [MANAGER FLAGS]
//	captf-dev [--tools DIR] [--repo DIR] [--node-mode namespace|in-process] demo [--runtime tofu|terraform]
//	    [--cluster-module DIR|--cluster-image REF] [--machine-module DIR|--machine-image REF] [--machinepool-module DIR|--machinepool-image REF]
//	captf-dev [--tools DIR] [--repo DIR] images [--out DIR]
//	captf-dev images import [--ref REF] [--arch ARCH] [--out DIR] OCI-LAYOUT-DIR|ARCHIVE
//	captf-dev [--tools DIR] [--repo DIR] images build --role=ROLE [--runtime tofu|terraform] [--ref REF] [--layout DIR] MODULE-DIR
//	captf-dev down
//	captf-dev logs [-n NAMESPACE] [-c CONTAINER] POD|JOB
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"captf.io/captf/internal/devenv"
	"captf.io/captf/internal/localnode"
	"captf.io/captf/pkg/contract"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "captf-dev:", err)
		os.Exit(1)
	}
}

func stateDir() string {
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "captf", "dev")
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache", "captf", "dev")
}

func run(args []string) error {
	global := flag.NewFlagSet("captf-dev", flag.ContinueOnError)
	tools := global.String("tools", os.Getenv("CAPTF_TOOLS"), "tool cache directory (default: build what is missing with hack/tools/build.sh and use its cache)")
	repo := global.String("repo", "", "CAPTF checkout holding config/ and examples/ (default: the current directory when it is one, else the module source of this captf-dev's version in the Go module cache)")
	nodeMode := global.String("node-mode", "", "how the local node runs containers: namespace or in-process (default: namespace where possible)")
	if err := global.Parse(args); err != nil {
		return err
	}
	if global.NArg() == 0 {
		return errors.New("usage: captf-dev [--tools DIR] [--repo DIR] [--node-mode MODE] up|manager|demo|images|down|logs")
	}
	switch localnode.Mode(*nodeMode) {
	case localnode.ModeAuto, localnode.ModeNamespace, localnode.ModeInProcess:
	default:
		return fmt.Errorf("--node-mode %q: want %s or %s", *nodeMode, localnode.ModeNamespace, localnode.ModeInProcess)
	}
	cmd, rest := global.Arg(0), global.Args()[1:]
	sub := ""
	if cmd == "images" && len(rest) > 0 {
		sub = rest[0]
	}
	importing, building := sub == "import", sub == "build"
	if (cmd == "up" || cmd == "demo" || cmd == "images") && !importing && (*tools == "" || !building) {
		dir, err := devenv.FindCheckout(context.Background(), *repo)
		if err != nil {
			return err
		}
		*repo = dir
	}
	if *tools == "" && (cmd == "up" || cmd == "demo" || cmd == "images") && !importing {
		steps := []string{"control-plane", "capi", "runtimes"}
		if cmd == "demo" && slices.ContainsFunc(rest, func(a string) bool { return strings.Contains(a, "-module") }) {
			steps = append(steps, "shell")
		}
		switch {
		case building:
			steps = []string{"runtimes", "shell"}
		case cmd == "images":
			steps = []string{"runtimes"}
		}
		dir, err := buildTools(*repo, steps...)
		if err != nil {
			return err
		}
		*tools = dir
	}
	switch cmd {
	case "up":
		fs := flag.NewFlagSet("up", flag.ContinueOnError)
		kubeconfig := fs.String("kubeconfig", filepath.Join(stateDir(), "kubeconfig"), "where to write the admin kubeconfig")
		withoutManager := fs.Bool("without-manager", false, "start everything but the CAPTF manager; `captf-dev manager` runs it")
		kubeadm := fs.Bool("kubeadm", false, "also run kubeadm's bootstrap and control plane providers (for ClusterClasses and the shipped cluster templates; adds ~30 s to the start)")
		if err := fs.Parse(rest); err != nil {
			return err
		}
		return up(devenv.Options{Tools: *tools, Repo: *repo, Kubeconfig: *kubeconfig, NodeMode: localnode.Mode(*nodeMode), WithoutManager: *withoutManager, Kubeadm: *kubeadm})
	case "manager":
		return manager(rest)
	case "demo":
		mods, err := parseDemo(rest)
		if err != nil {
			return err
		}
		mods.Tools = *tools
		return demo(devenv.Options{Tools: *tools, Repo: *repo, Kubeconfig: filepath.Join(stateDir(), "demo.kubeconfig"), NodeMode: localnode.Mode(*nodeMode)}, mods)
	case "images":
		if importing {
			return importImage(rest[1:])
		}
		if building {
			return buildImage(*tools, rest[1:])
		}
		return images(*tools, *repo, rest)
	case "down":
		return down()
	case "logs":
		return logs(rest)
	default:
		return fmt.Errorf("unknown command %q: want up, manager, demo, images, down or logs", cmd)
	}
}

// start starts the environment of opts (tools, repo, kubeconfig, node
// mode) with its logs in the state directory.
func start(ctx context.Context, opts devenv.Options) (*devenv.Env, error) {
	kcmLog, err := os.OpenFile(filepath.Join(stateDir(), "kube-controller-manager.log"), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	managerLog, err := os.OpenFile(filepath.Join(stateDir(), "manager.log"), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(managerLog)))
	capiLog, err := os.OpenFile(filepath.Join(stateDir(), "capi-manager.log"), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	nodeLog, err := os.OpenFile(filepath.Join(stateDir(), "node.log"), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	opts.StateDir, opts.Log = stateDir(), os.Stdout
	opts.ControllerLog, opts.CAPILog, opts.NodeLog = kcmLog, capiLog, zap.New(zap.WriteTo(nodeLog))
	return devenv.Up(ctx, opts)
}

func up(opts devenv.Options) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := os.MkdirAll(stateDir(), 0o700); err != nil {
		return err
	}
	env, err := start(ctx, opts)
	if err != nil {
		return err
	}
	pidFile := filepath.Join(stateDir(), "captf-dev.pid")
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
		_ = env.Down()
		return err
	}
	defer func() { _ = os.Remove(pidFile) }()
	fmt.Printf("kubeconfig: %s\nready\n", opts.Kubeconfig)
	<-ctx.Done()
	fmt.Println("Stopping")
	return env.Down()
}

// manager runs the CAPTF manager of an environment started with `up
// --without-manager` in the foreground until SIGINT or SIGTERM.
func manager(args []string) error {
	cmd, err := devenv.ParseManagerCommand(args, stateDir())
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return cmd.Run(ctx, os.Stdout)
}

func down() error {
	data, err := os.ReadFile(filepath.Join(stateDir(), "captf-dev.pid"))
	if err != nil {
		return fmt.Errorf("no running environment found (%w)", err)
	}
	pid, err := strconv.Atoi(string(data))
	if err != nil {
		return fmt.Errorf("bad pid file: %w", err)
	}
	return syscall.Kill(pid, syscall.SIGTERM)
}

// buildTools builds the tools of the given hack/tools steps that are
// missing from the tool cache (progress on stderr; a warm run takes well
// under a second) and returns the cache directory.
func buildTools(repo string, steps ...string) (string, error) {
	script := filepath.Join(repo, "hack", "tools", "build.sh")
	// Through bash: a module's zip (the source `go install` leaves in the
	// module cache) keeps no file mode, so the script may not be executable.
	build := exec.Command("bash", append([]string{script}, steps...)...)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return "", fmt.Errorf("building the tools (%s): %w", script, err)
	}
	out, err := exec.Command("bash", script, "--print-dir").Output()
	if err != nil {
		return "", fmt.Errorf("finding the tool cache (%s --print-dir): %w", script, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// images builds the module images of examples/modules for both runtimes
// in the image store (or --out), one line per image: built or unchanged.
func images(tools, repo string, args []string) error {
	store, err := devenv.DefaultImageStore()
	if err != nil {
		return err
	}
	fs := flag.NewFlagSet("images", flag.ContinueOnError)
	out := fs.String("out", store, "image store to build into (the environment reads the default one)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return errors.New("usage: captf-dev images [--out DIR]")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	_, err = devenv.BuildImages(ctx, *out, repo, tools, func(b devenv.BuiltImage) {
		state := "unchanged"
		if b.Changed {
			state = "built"
		}
		_, digest, _ := strings.Cut(b.ID, "@")
		fmt.Printf("%-9s %-32s %.19s  %s\n", state, b.Ref, digest, b.Dir)
	})
	return err
}

// importImage puts an image built elsewhere (an OCI layout, or an archive
// of one or of `docker save`) in the image store, where the local node
// runs it by its reference and by its digest.
func importImage(args []string) error {
	store, err := devenv.DefaultImageStore()
	if err != nil {
		return err
	}
	fs := flag.NewFlagSet("images import", flag.ContinueOnError)
	out := fs.String("out", store, "image store to import into (the environment reads the default one)")
	ref := fs.String("ref", "", "the reference to hold it under (default: the one the layout or archive names)")
	arch := fs.String("arch", runtime.GOARCH, "the platform linux/<arch> to take from a multi-platform image")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("usage: captf-dev images import [--ref REF] [--arch ARCH] [--out DIR] OCI-LAYOUT-DIR|ARCHIVE")
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return fmt.Errorf("creating the image store: %w", err)
	}
	imp, err := localnode.ImportImage(*out, fs.Arg(0), *ref, *arch)
	if err != nil {
		return err
	}
	state := "unchanged"
	if imp.Changed {
		state = "imported"
	}
	fmt.Printf("%-9s %s@%s  %s\n", state, imp.Ref, imp.Digest, imp.Dir)
	return nil
}

// buildImage lays a module directory over its runtime's base image as an
// OCI layout, imports it into the image store and lints it.
func buildImage(tools string, args []string) error {
	store, err := devenv.DefaultImageStore()
	if err != nil {
		return err
	}
	fs := flag.NewFlagSet("images build", flag.ContinueOnError)
	role := fs.String("role", "", "the module's contract role: cluster, machine or machinepool (required)")
	rt := fs.String("runtime", "tofu", "the runtime of the base image: tofu or terraform")
	ref := fs.String("ref", "", "the reference the image store holds it under (default local/dev/<directory name>:<runtime>)")
	layout := fs.String("layout", "", "the OCI image layout directory to write (default out/images/<directory name>-<runtime>)")
	out := fs.String("out", store, "image store to import into (the environment reads the default one)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 || *role == "" {
		return errors.New("usage: captf-dev images build --role=ROLE [--runtime tofu|terraform] [--ref REF] [--layout DIR] MODULE-DIR")
	}
	r := contract.Role(*role)
	if !slices.Contains(contract.Roles, r) {
		return fmt.Errorf("--role=%q: use cluster, machine or machinepool", *role)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	built, err := devenv.BuildModuleImage(ctx, devenv.ModuleImageOptions{
		Module: fs.Arg(0), Role: r, Runtime: *rt, Tools: tools, Ref: *ref, Layout: *layout, Store: *out,
	})
	if err != nil {
		return err
	}
	fmt.Printf("built     %s@%s  %s\n", built.Ref, built.Digest, built.Layout)
	report, err := devenv.LintImage(ctx, built.Layout, r)
	if err != nil {
		return fmt.Errorf("linting %s: %w", built.Layout, err)
	}
	if err := report.WriteText(os.Stdout); err != nil {
		return err
	}
	if report.Summary.Error > 0 {
		return fmt.Errorf("the image of %s breaks the module contract (errors above); it is built and imported all the same", fs.Arg(0))
	}
	return nil
}

// logs prints the kept log of a pod of the last environment (or of the
// newest pod of a Job), as `kubectl logs` would.
func logs(args []string) error {
	fs := flag.NewFlagSet("logs", flag.ContinueOnError)
	ns := fs.String("n", devenv.QuickstartNamespace, "namespace of the pod")
	container := fs.String("c", "", "container (default: the pod's first)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("usage: captf-dev logs [-n NAMESPACE] [-c CONTAINER] POD|JOB")
	}
	data, err := devenv.ReadLog(stateDir(), *ns, fs.Arg(0), *container)
	if err != nil {
		return err
	}
	_, err = os.Stdout.Write(data)
	return err
}

// parseDemo reads the demo's flags: a module directory or an image per
// role to run instead of the example's.
func parseDemo(args []string) (devenv.DemoModules, error) {
	store, err := devenv.DefaultImageStore()
	if err != nil {
		return devenv.DemoModules{}, err
	}
	m := devenv.DemoModules{Dirs: map[contract.Role]string{}, Images: map[contract.Role]string{}, Store: store,
		Layouts: filepath.Join(stateDir(), "images")}
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.StringVar(&m.Runtime, "runtime", "tofu", "the runtime the module directories' images are built on: tofu or terraform")
	dirs, images := map[contract.Role]*string{}, map[contract.Role]*string{}
	for _, r := range contract.Roles {
		dirs[r] = fs.String(string(r)+"-module", "", "a "+string(r)+" module directory the demo builds, lints and runs instead of the example's")
		images[r] = fs.String(string(r)+"-image", "", "a "+string(r)+" module image of the image store (captf-dev images import) the demo runs instead of the example's")
	}
	if err := fs.Parse(args); err != nil {
		return m, err
	}
	if fs.NArg() != 0 {
		return m, errors.New("usage: captf-dev demo [--runtime tofu|terraform] [--ROLE-module DIR | --ROLE-image REF] (ROLE: cluster, machine, machinepool)")
	}
	for _, r := range contract.Roles {
		if *dirs[r] != "" && *images[r] != "" {
			return m, fmt.Errorf("--%s-module and --%s-image: give one of them", r, r)
		}
		if *dirs[r] != "" {
			m.Dirs[r] = *dirs[r]
		}
		if *images[r] != "" {
			m.Images[r] = *images[r]
		}
	}
	return m, nil
}

func demo(opts devenv.Options, mods devenv.DemoModules) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := os.MkdirAll(stateDir(), 0o700); err != nil {
		return err
	}
	images, err := devenv.PrepareDemoModules(ctx, os.Stdout, mods)
	if err != nil {
		return err
	}
	env, err := start(ctx, opts)
	if err != nil {
		return err
	}
	env.DemoImages = images
	demoErr := env.Demo(ctx, os.Stdout)
	if err := env.Down(); err != nil && demoErr == nil {
		demoErr = err
	}
	return demoErr
}
