// Package kubectlplugin is `kubectl captf`: the operator runbooks made into
// commands. It talks to the cluster the way kubectl does (the usual
// kubeconfig flags) and never prints a credential.
package kubectlplugin

import (
	"io"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Streams are where a command writes.
type Streams struct {
	Out, ErrOut io.Writer
}

// NewCommand returns the `kubectl captf` command tree.
func NewCommand(streams Streams) *cobra.Command {
	flags := genericclioptions.NewConfigFlags(true)
	root := &cobra.Command{
		Use:           "kubectl-captf",
		Short:         "Operate CAPTF (Cluster API Provider for Terraform/OpenTofu) objects",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	flags.AddFlags(root.PersistentFlags())
	root.AddCommand(newStateCommand(flags, streams))
	root.AddCommand(newPlanCommands(flags, streams)...)
	root.AddCommand(newInputsCommand(flags, streams))
	return root
}

// clients builds a clientset and resolves the namespace from the flags.
func clients(flags *genericclioptions.ConfigFlags) (kubernetes.Interface, string, error) {
	cfg, ns, err := configAndNamespace(flags)
	if err != nil {
		return nil, "", err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	return cs, ns, err
}

// configAndNamespace resolves the kubeconfig flags: the REST config and
// the namespace to work in.
func configAndNamespace(flags *genericclioptions.ConfigFlags) (*rest.Config, string, error) {
	cfg, err := flags.ToRESTConfig()
	if err != nil {
		return nil, "", err
	}
	ns, _, err := flags.ToRawKubeConfigLoader().Namespace()
	return cfg, ns, err
}
