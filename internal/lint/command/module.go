package command

import (
	"fmt"

	"github.com/spf13/cobra"

	"captf.io/captf/internal/lint"
	"captf.io/captf/internal/lint/modulecheck"
)

func newModule(s Streams, code *int) *cobra.Command {
	var c common
	cmd := &cobra.Command{
		Use:   "module --role=<role> [flags] <module-dir>",
		Short: "Check a module directory against the module contract, without running a runtime",
		Args:  oneArg("the module directory"),
		RunE: func(_ *cobra.Command, args []string) error {
			role, err := c.validate()
			if err != nil {
				return err
			}
			res, err := modulecheck.Check(args[0], modulecheck.Options{Role: role})
			if err != nil {
				return err
			}
			r := &lint.Report{
				Context:  fmt.Sprintf("module %s, role %s, contract %s", args[0], role, c.contract),
				Findings: res.Findings,
			}
			*code = c.finish(s, r)
			return nil
		},
	}
	c.add(cmd.Flags())
	return cmd
}
