package runner

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	"captf.io/captf/internal/atomicfile"
)

const usage = `usage:
  runner copy <dest>          copy this binary to <dest>, mode 0755
  runner run --op=<op> [...]  run one operation (apply, plan, destroy, refresh, drift, restore)
  runner version              print the runner's version
`

// Main is the runner's command line; it returns the process exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return ExitUsage
	}
	switch args[0] {
	case "copy":
		if len(args) != 2 {
			fmt.Fprint(stderr, "runner copy takes exactly one argument, the destination\n"+usage)
			return ExitUsage
		}
		if err := copySelf(args[1]); err != nil {
			fmt.Fprintln(stderr, "runner copy:", err)
			return ExitFailure
		}
		return ExitOK
	case "version", "--version", "-version":
		fmt.Fprintln(stdout, "runner", version())
		return ExitOK
	case "run":
		return runCommand(args[1:], stdout, stderr)
	default:
		fmt.Fprintf(stderr, "unknown command %q\n%s", args[0], usage)
		return ExitUsage
	}
}

func runCommand(args []string, stdout, stderr io.Writer) (code int) {
	stop := make(chan struct{})
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(signals)
	go func() {
		if sig, ok := <-signals; ok {
			fmt.Fprintf(stderr, "Received %s: stopping the runtime\n", sig)
			close(stop)
		}
	}()
	o, err := ParseRunFlags(args, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "runner run:", err)
		res := Result{Version: ResultVersion, Op: o.Op, Steps: []Step{},
			Error: &RunError{Kind: KindStep, Step: "flags", Tail: capSummary(singleLine(err.Error()), SummaryMaxBytes)}}
		if werr := WriteResult(resultPath(args), res); werr != nil {
			fmt.Fprintln(stderr, "runner run:", werr)
		}
		if errors.Is(err, ErrUsage) {
			return ExitUsage
		}
		return ExitFailure
	}
	// A bug must still leave a result, and must not exit 2 (a usage error).
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(stderr, "runner run: internal error: %v\n%s", p, debug.Stack())
			res := Result{Version: ResultVersion, Op: o.Op, Steps: []Step{},
				Error: &RunError{Kind: KindStep, Tail: "the runner failed (internal error); see the Job's logs"}}
			_ = WriteResult(o.Result, res)
			code = ExitFailure
		}
	}()
	res, code := Run(o, Env{Environ: os.Environ(), Stdout: stdout, Stderr: stderr, Stop: stop})
	if err := WriteResult(o.Result, res); err != nil {
		fmt.Fprintln(stderr, "runner run:", err)
		return ExitFailure
	}
	return code
}

// resultPath finds --result in arguments that did not parse.
func resultPath(args []string) string {
	for i, a := range args {
		for _, prefix := range []string{"--result=", "-result="} {
			if strings.HasPrefix(a, prefix) {
				return strings.TrimPrefix(a, prefix)
			}
		}
		if (a == "--result" || a == "-result") && i+1 < len(args) {
			return args[i+1]
		}
	}
	return DefaultResult
}

// copySelf copies the running binary to dest, so that an init container
// can hand it to the module image's container.
func copySelf(dest string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	data, err := os.ReadFile(self)
	if err != nil {
		return err
	}
	return atomicfile.Write(dest, data, 0o755)
}

func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		return fmt.Sprintf("%s (%s)", bi.Main.Version, bi.GoVersion)
	}
	return "unknown"
}
