// Command kubectl-captf is the `kubectl captf` plugin: install it on your
// PATH and run `kubectl captf state size tfm/<name>`.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"captf.io/captf/internal/kubectlplugin"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cmd := kubectlplugin.NewCommand(kubectlplugin.Streams{Out: os.Stdout, ErrOut: os.Stderr})
	if err := cmd.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}
