package command

import (
	"fmt"

	"github.com/spf13/cobra"

	"captf.io/captf/internal/lint"
	"captf.io/captf/internal/lint/imagecheck"
	"captf.io/captf/internal/lint/modulecheck"
	"captf.io/captf/pkg/contract"
)

func newImage(s Streams, code *int) *cobra.Command {
	var c common
	var o imagecheck.Options
	cmd := &cobra.Command{
		Use:   "image --role=<role> [flags] <image-ref | oci:<dir>>",
		Short: "Check a module image against the image and module contracts, without running it",
		Args:  oneArg("the image reference or oci:<dir>"),
		RunE: func(cmd *cobra.Command, args []string) error {
			role, err := c.validate()
			if err != nil {
				return err
			}
			o.Role, o.Contract, o.Ref = role, c.contract, args[0]
			o.PlatformSet = cmd.Flags().Changed("platform")
			o.ModuleCheck = ModuleFacts(role)
			findings, desc, err := imagecheck.Check(cmd.Context(), o)
			if err != nil {
				return err
			}
			r := &lint.Report{
				Context:  fmt.Sprintf("image %s, role %s, contract %s", args[0], role, c.contract),
				Findings: findings,
				Image:    desc,
			}
			*code = c.finish(s, r)
			return nil
		},
	}
	c.add(cmd.Flags())
	cmd.Flags().StringVar(&o.Platform, "platform", "linux/amd64", "the platform to check in an image index (a single-platform image is checked as it is unless this is given)")
	cmd.Flags().BoolVar(&o.AllPlatforms, "all-platforms", false, "check every platform of an image index")
	cmd.Flags().BoolVar(&o.Insecure, "insecure", false, "reach the registry over plain HTTP")
	return cmd
}

// ModuleFacts runs the module checks of role on the module an image
// holds, for imagecheck.
func ModuleFacts(role contract.Role) func(dir string) (imagecheck.ModuleFacts, error) {
	return func(dir string) (imagecheck.ModuleFacts, error) {
		r, err := modulecheck.Check(dir, modulecheck.Options{Role: role})
		return imagecheck.ModuleFacts{Findings: r.Findings, Providers: r.Providers, Variables: r.Variables}, err
	}
}
