package setup

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/pflag"
	cliflag "k8s.io/component-base/cli/flag"
)

// CommandLine is the manager's whole command line: Options, the logging
// flags and --help, grouped for --help.
type CommandLine struct {
	Options Options
	Logging *LoggingOptions
	Help    bool

	sections cliflag.NamedFlagSets
	flags    *pflag.FlagSet
}

// NewCommandLine registers every flag with its default.
func NewCommandLine(name string) *CommandLine {
	c := &CommandLine{Logging: NewLoggingOptions()}
	c.Options.AddNamedFlagSets(&c.sections)
	c.Logging.AddFlags(c.sections.FlagSet(GroupLogging))
	c.sections.FlagSet(GroupOther).BoolVarP(&c.Help, "help", "h", false, "Print the flags, grouped, and exit.")
	// Logging before Other: the groups print in the reference's order.
	c.sections.Order = []string{GroupCAPTF, GroupControllers, GroupLeader, GroupWebhooks, GroupDiagnostics, GroupLogging, GroupOther}

	c.flags = pflag.NewFlagSet(name, pflag.ContinueOnError)
	c.flags.SetNormalizeFunc(cliflag.WordSepNormalizeFunc) // --sync_period = --sync-period
	c.flags.SetOutput(io.Discard)                          // errors are returned, usage printed on request
	for _, s := range c.sections.Order {
		c.flags.AddFlagSet(c.sections.FlagSets[s])
	}
	return c
}

// FlagSet is every flag of the command line.
func (c *CommandLine) FlagSet() *pflag.FlagSet {
	return c.flags
}

// ErrUsage wraps errors of the command line's syntax (unknown flag,
// unparsable value): the manager exits 2 on them.
var ErrUsage = errors.New("invalid command line")

// Parse reads args and validates every value. With --help or a --version
// that prints, it only parses: the caller prints and exits.
func (c *CommandLine) Parse(args []string) error {
	if err := c.flags.Parse(args); err != nil {
		return fmt.Errorf("%w: %w (see --help)", ErrUsage, err)
	}
	if len(c.flags.Args()) > 0 {
		return fmt.Errorf("%w: unexpected argument %q; the manager takes flags only, or the single argument version", ErrUsage, c.flags.Args()[0])
	}
	if print, _ := c.Options.Version.Print(); c.Help || print {
		return nil
	}
	return errors.Join(c.Logging.Validate(), c.Options.Validate())
}

// Usage prints the flags in their groups.
func (c *CommandLine) Usage(w io.Writer, program string) {
	_, _ = fmt.Fprintf(w, "Usage: %s [flags]\n       %s version\n", program, program)
	cliflag.PrintSections(w, c.sections, 0)
}
