package command

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"captf.io/captf/internal/lint"
	"captf.io/captf/pkg/contract"
)

// Streams are where a run writes.
type Streams struct {
	Out, Err io.Writer
}

// common are the flags of module and image.
type common struct {
	role, contract string
	json, strict   bool
	allowWarnings  []string
}

func (c *common) add(fs *pflag.FlagSet) {
	fs.StringVar(&c.role, "role", "", "the contract role the module plays: cluster, machine or machinepool (required)")
	fs.StringVar(&c.contract, "contract", contract.Version, "the module contract version to check against")
	fs.BoolVar(&c.json, "json", false, "print the report as JSON")
	fs.BoolVar(&c.strict, "strict", false, "exit 1 on warnings too")
	fs.StringSliceVar(&c.allowWarnings, "allow-warning", nil, "report the warnings of this check ID as info (repeatable or comma separated; errors cannot be allowed)")
}

// validate checks the role and contract flags.
func (c *common) validate() (contract.Role, error) {
	if c.role == "" {
		return "", lint.Usage("--role is required: one of %s", roleList())
	}
	role := contract.Role(c.role)
	if !slices.Contains(contract.Roles, role) {
		return "", lint.Usage("--role=%q is not a role: use one of %s", c.role, roleList())
	}
	if c.contract != contract.Version {
		return "", lint.Usage("--contract=%q is not a contract this tfcapi-lint knows: use %s", c.contract, contract.Version)
	}
	return role, nil
}

// finish completes the report, prints it and returns the exit code.
func (c *common) finish(s Streams, r *lint.Report) int {
	r.Finish(c.allowWarnings)
	write := r.WriteText
	if c.json {
		write = r.WriteJSON
	}
	if err := write(s.Out); err != nil {
		fmt.Fprintln(s.Err, "error:", err)
		return lint.ExitUnparsable
	}
	return r.ExitCode(c.strict)
}

func roleList() string {
	names := make([]string, len(contract.Roles))
	for i, r := range contract.Roles {
		names[i] = string(r)
	}
	return strings.Join(names, ", ")
}

// oneArg accepts exactly one positional argument.
func oneArg(what string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) != 1 {
			return lint.Usage("expected one argument, %s; got %d", what, len(args))
		}
		return nil
	}
}

// Run runs tfcapi-lint with args (without the program name) and returns
// its exit code.
func Run(ctx context.Context, args []string, s Streams) int {
	code := lint.ExitOK
	root := newRoot(s, &code)
	root.SetArgs(args)
	if err := root.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(s.Err, "error:", err)
		var usage *lint.UsageError
		if errors.As(err, &usage) {
			fmt.Fprintln(s.Err, "Run 'tfcapi-lint --help' for usage.")
		}
		return lint.ExitCodeOf(err)
	}
	return code
}

func newRoot(s Streams, code *int) *cobra.Command {
	var showVersion string
	root := &cobra.Command{
		Use:           "tfcapi-lint",
		Short:         "Check a CAPTF module, or its image, against the module contract",
		SilenceErrors: true,
		SilenceUsage:  true,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return lint.Usage("unknown command %q: use module, image or version", args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch showVersion {
			case "true":
				info := BuildInfo()
				_, err := fmt.Fprintf(s.Out, "tfcapi-lint %s\n", info.Version)
				return err
			case "":
				cmd.SetOut(s.Err)
				_ = cmd.Usage()
				return lint.Usage("no command given: use module, image or version")
			case "raw":
				return printVersion(s.Out, true)
			default:
				return lint.Usage("--version=%q: use --version or --version=raw", showVersion)
			}
		},
	}
	root.SetOut(s.Out)
	root.SetErr(s.Err)
	root.Flags().StringVar(&showVersion, "version", "", "print the version and exit (--version=raw: every build field)")
	root.Flags().Lookup("version").NoOptDefVal = "true"
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return lint.Usage("%v", err) })
	root.CompletionOptions.DisableDefaultCmd = true
	root.AddCommand(newModule(s, code), newImage(s, code), newVersion(s))
	return root
}

func newVersion(s Streams) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit, build date and the contracts checked",
		Args:  oneOrNone(0),
		RunE:  func(*cobra.Command, []string) error { return printVersion(s.Out, asJSON) },
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}

func oneOrNone(n int) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) != n {
			return lint.Usage("expected %d arguments, got %d", n, len(args))
		}
		return nil
	}
}
