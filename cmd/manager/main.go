// Command manager is the CAPTF manager: the controllers of CAPTF's kinds and
// their admission webhooks. Its flags are defined in internal/setup; `manager
// version` prints the same as --version.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"

	"captf.io/captf/internal/setup"
)

const program = "manager"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the manager's command line: it returns the exit code, 2 on a
// command line it cannot parse, 1 on invalid values or a failed start.
func run(args []string, stdout, stderr io.Writer) int {
	cl := setup.NewCommandLine(program)
	if len(args) > 0 && args[0] == "version" {
		args = append([]string{"--version"}, args[1:]...)
	}
	if err := cl.Parse(args); err != nil {
		_, _ = fmt.Fprintf(stderr, "%s: %v\n", program, err)
		if errors.Is(err, setup.ErrUsage) {
			return 2
		}
		return 1
	}
	if cl.Help {
		cl.Usage(stdout, program)
		return 0
	}
	if print, raw := cl.Options.Version.Print(); print {
		b := cl.Options.Build()
		if raw {
			_, _ = fmt.Fprintln(stdout, b.Raw())
		} else {
			_, _ = fmt.Fprintln(stdout, b)
		}
		return 0
	}
	if err := cl.Logging.Apply(); err != nil {
		_, _ = fmt.Fprintf(stderr, "%s: %v\n", program, err)
		return 1
	}
	setup.LogFlags(cl.FlagSet())

	cfg, err := restConfig(cl.Options.Kubeconfig)
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "%s: %v\n", program, err)
		return 1
	}
	if err := setup.Run(ctrl.SetupSignalHandler(), cfg, cl.Options); err != nil {
		_, _ = fmt.Fprintf(stderr, "%s: %v\n", program, err)
		return 1
	}
	return 0
}

func restConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig != "" {
		return clientcmd.BuildConfigFromFlags("", kubeconfig)
	}
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return nil, err
	}
	// controller-runtime's defaults give way to the manager's own
	// (setup.DefaultQPS), as with --kubeconfig.
	cfg.QPS, cfg.Burst = 0, 0
	return cfg, nil
}
