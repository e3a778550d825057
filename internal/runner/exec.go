package runner

import (
	"bytes"
	"errors"
	"io"
	"os/exec"
	"syscall"
	"time"
)

// stdoutTailBytes is how much of a step's stdout is kept to find the final
// summary line of apply and destroy.
const stdoutTailBytes = 4 << 10

// waitDelay bounds how long a finished or killed command's output copies
// are waited for.
const waitDelay = 5 * time.Second

// output says what happens to a step's stdout.
type output int

const (
	// streamed: stdout goes to the log as it comes.
	streamed output = iota
	// captured: stdout is kept in memory and never logged (show -json: a
	// plan document carries every input value).
	captured
	// capturedAndLogged: stdout is kept for the summary and logged too
	// (validate -json's diagnostics carry no input values).
	capturedAndLogged
)

// command is one runtime invocation.
type command struct {
	name   string
	args   []string
	stdout output
	// accepted exit codes besides 0 (plan's 2 under -detailed-exitcode).
	accepted []int
	// acceptFailure, when set, may accept a failed outcome as success
	// (force-unlock of a lock someone else already released).
	acceptFailure func(outcome) bool
	// timeout, when set, kills the command after that long.
	timeout time.Duration
}

// outcome is what a command did.
type outcome struct {
	exit        int
	stdout      []byte
	stdoutTail  []byte
	stderr      *TailBuffer
	interrupted bool
	startErr    error
	seconds     float64
}

func (o outcome) ok(c command) bool {
	if o.interrupted || o.startErr != nil {
		return false
	}
	if o.exit == 0 {
		return true
	}
	for _, a := range c.accepted {
		if o.exit == a {
			return true
		}
	}
	return c.acceptFailure != nil && c.acceptFailure(o)
}

// executor runs runtime commands one at a time in the generated root.
type executor struct {
	bin         []string
	root        string
	env         []string
	log         io.Writer
	errLog      io.Writer
	stop        <-chan struct{}
	stopTimeout time.Duration
}

// run execs the runtime directly (no shell, no -chdir; the working
// directory is the root). On stop it sends SIGTERM to the runtime process
// alone, never its provider plugins, waits up to stopTimeout for it to
// write state and release the lock, then kills it.
func (e *executor) run(c command) outcome {
	start := time.Now()
	args := append(append([]string{}, e.bin[1:]...), c.args...)
	cmd := exec.Command(e.bin[0], args...)
	cmd.Dir, cmd.Env = e.root, e.env
	out := outcome{stderr: NewTailBuffer(StderrTailBytes)}
	var stdout bytes.Buffer
	tail := NewTailBuffer(stdoutTailBytes)
	switch c.stdout {
	case captured:
		cmd.Stdout = &stdout
	case capturedAndLogged:
		cmd.Stdout = io.MultiWriter(&stdout, e.log)
	case streamed:
		cmd.Stdout = io.MultiWriter(e.log, tail)
	}
	cmd.Stderr = io.MultiWriter(e.errLog, out.stderr)
	// A descendant that keeps the output pipes open must not hold the run
	// past its stop timeout: stop waiting for the copies after a while.
	cmd.WaitDelay = waitDelay
	if err := cmd.Start(); err != nil {
		out.exit, out.startErr = 1, err
		return out
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var timeout <-chan time.Time
	if c.timeout > 0 {
		timeout = time.After(c.timeout)
	}
	var err error
	select {
	case err = <-done:
	case <-timeout:
		_ = cmd.Process.Kill()
		err = <-done
	case <-e.stop:
		select {
		case err = <-done: // it finished as the signal came: not interrupted
		default:
			out.interrupted = true
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case err = <-done:
			case <-time.After(e.stopTimeout):
				_ = cmd.Process.Kill()
				err = <-done
			}
		}
	}
	out.exit = exitCode(err)
	out.stdout, out.stdoutTail = stdout.Bytes(), tail.Bytes()
	out.seconds = time.Since(start).Seconds()
	return out
}

// exitCode is the command's exit code; 1 when it was killed by a signal.
func exitCode(err error) int {
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() >= 0 {
		return ee.ExitCode()
	}
	return 1
}
