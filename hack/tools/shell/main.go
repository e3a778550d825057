//go:build captfshell

// Command sh is the shell of CAPTF's module base images (`make images`):
// a static POSIX shell, so that a module's local-exec provisioners run in
// an image with no distribution in it. It interprets with mvdan.cc/sh and
// answers the core utilities (cat, chmod, cp, find, ls, mkdir, mktemp, mv,
// rm, tar, touch, xargs, base64, gzip, gunzip, shasum) itself; any other
// command is looked up in PATH.
//
//	sh [-eux] [-o OPTION] -c COMMAND [NAME [ARG...]]
//	sh [-eux] [-o OPTION] FILE [ARG...]
//	sh [-eux] [-o OPTION] [-] < SCRIPT
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"mvdan.cc/sh/moreinterp/coreutils"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"
)

func main() {
	err := run(os.Args[1:])
	var status interp.ExitStatus
	switch {
	case errors.As(err, &status):
		os.Exit(int(status))
	case err != nil:
		fmt.Fprintln(os.Stderr, "sh:", err)
		os.Exit(2)
	}
}

// run reads the program (the -c string, a file, or standard input) and
// runs it with the options before it (-e, -u, -x, -o pipefail, ... as the
// set builtin takes them) and the remaining arguments as $0 and the
// positional parameters.
func run(args []string) error {
	var opts []string
	command := false
	for len(args) > 0 && len(args[0]) > 1 && (args[0][0] == '-' || args[0][0] == '+') {
		a := args[0]
		args = args[1:]
		if a == "--" {
			break
		}
		if a[0] == '-' && strings.Contains(a, "c") {
			command, a = true, strings.ReplaceAll(a, "c", "")
			if a == "-" {
				continue
			}
		}
		opts = append(opts, a)
		if (a == "-o" || a == "+o") && len(args) > 0 {
			opts, args = append(opts, args[0]), args[1:]
		}
	}
	var (
		src  io.Reader = os.Stdin
		name           = "sh"
	)
	switch {
	case command:
		if len(args) == 0 {
			return errors.New("-c needs a command")
		}
		src, args = strings.NewReader(args[0]), args[1:]
		if len(args) > 0 {
			name, args = args[0], args[1:]
		}
	case len(args) > 0 && args[0] == "-":
		args = args[1:]
	case len(args) > 0:
		f, err := os.Open(args[0])
		if err != nil {
			return err
		}
		defer func() { _ = f.Close() }()
		src, name, args = f, args[0], args[1:]
	}
	prog, err := syntax.NewParser().Parse(src, name)
	if err != nil {
		return err
	}
	r, err := interp.New(
		interp.StdIO(os.Stdin, os.Stdout, os.Stderr),
		interp.Params(append(append(opts, "--"), args...)...),
		interp.ExecHandlers(coreutils.ExecHandler),
	)
	if err != nil {
		return err
	}
	return r.Run(context.Background(), prog)
}
