// Command runner runs one Terraform/OpenTofu operation inside a CAPTF Job:
// the init container copies it into the pod (`runner copy`), and the module
// image's container runs it (`runner run --op=...`). See internal/runner.
package main

import (
	"os"

	"captf.io/captf/internal/runner"
)

func main() {
	os.Exit(runner.Main(os.Args[1:], os.Stdout, os.Stderr))
}
