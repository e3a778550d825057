// Command tfcapi-lint tells a module author, before any cluster exists,
// whether a module and its image keep the CAPTF module contract:
//
//	tfcapi-lint module --role=machine ./my-module
//	tfcapi-lint image --role=machine oci:./out/my-module
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"captf.io/captf/internal/lint/command"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := command.Run(ctx, os.Args[1:], command.Streams{Out: os.Stdout, Err: os.Stderr})
	stop()
	os.Exit(code)
}
