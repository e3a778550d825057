// Command manager is the CAPTF manager: the controllers of CAPTF's kinds and
// their admission webhooks. See internal/setup for its flags.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"captf.io/captf/internal/setup"
)

func main() {
	var o setup.Options
	fs := pflag.NewFlagSet("manager", pflag.ExitOnError)
	o.AddFlags(fs)
	zapOpts := zap.Options{}
	goFlags := flag.NewFlagSet("logging", flag.ExitOnError)
	zapOpts.BindFlags(goFlags)
	fs.AddGoFlagSet(goFlags)
	_ = fs.Parse(os.Args[1:]) // ExitOnError: a bad flag exits 2 with usage
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))
	setup.LogFlags(fs)

	cfg, err := restConfig(o.Kubeconfig)
	if err != nil {
		fmt.Fprintln(os.Stderr, "manager:", err)
		os.Exit(1)
	}
	if err := setup.Run(ctrl.SetupSignalHandler(), cfg, o); err != nil {
		fmt.Fprintln(os.Stderr, "manager:", err)
		os.Exit(1)
	}
}

func restConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig != "" {
		return clientcmd.BuildConfigFromFlags("", kubeconfig)
	}
	return ctrl.GetConfig()
}
