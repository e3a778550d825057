// Command captf-dev runs CAPTF's embedded local environment: a real control
// plane on this machine, built from the Go module proxy by hack/tools.
//
//	captf-dev [--tools DIR] [--repo DIR] up [--kubeconfig PATH]
//	captf-dev [--tools DIR] [--repo DIR] demo
//	captf-dev down
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"captf.io/captf/internal/devenv"
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
	tools := global.String("tools", os.Getenv("CAPTF_TOOLS"), "tool cache directory (make -s tools-dir)")
	repo := global.String("repo", ".", "CAPTF checkout holding config/ and examples/")
	if err := global.Parse(args); err != nil {
		return err
	}
	if global.NArg() == 0 {
		return errors.New("usage: captf-dev [--tools DIR] [--repo DIR] up|demo|down")
	}
	cmd, rest := global.Arg(0), global.Args()[1:]
	switch cmd {
	case "up":
		fs := flag.NewFlagSet("up", flag.ContinueOnError)
		kubeconfig := fs.String("kubeconfig", filepath.Join(stateDir(), "kubeconfig"), "where to write the admin kubeconfig")
		if err := fs.Parse(rest); err != nil {
			return err
		}
		return up(*tools, *repo, *kubeconfig)
	case "demo":
		return demo(*tools, *repo)
	case "down":
		return down()
	default:
		return fmt.Errorf("unknown command %q: want up, demo or down", cmd)
	}
}

func start(ctx context.Context, tools, repo, kubeconfig string) (*devenv.Env, error) {
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
	return devenv.Up(ctx, devenv.Options{Tools: tools, Repo: repo, Kubeconfig: kubeconfig, Log: os.Stdout, ControllerLog: kcmLog, CAPILog: capiLog})
}

func up(tools, repo, kubeconfig string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := os.MkdirAll(stateDir(), 0o700); err != nil {
		return err
	}
	env, err := start(ctx, tools, repo, kubeconfig)
	if err != nil {
		return err
	}
	pidFile := filepath.Join(stateDir(), "captf-dev.pid")
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
		_ = env.Down()
		return err
	}
	defer func() { _ = os.Remove(pidFile) }()
	fmt.Printf("kubeconfig: %s\nready\n", kubeconfig)
	<-ctx.Done()
	fmt.Println("Stopping")
	return env.Down()
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

func demo(tools, repo string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := os.MkdirAll(stateDir(), 0o700); err != nil {
		return err
	}
	env, err := start(ctx, tools, repo, filepath.Join(stateDir(), "demo.kubeconfig"))
	if err != nil {
		return err
	}
	demoErr := env.Demo(ctx, os.Stdout)
	if err := env.Down(); err != nil && demoErr == nil {
		demoErr = err
	}
	return demoErr
}
