package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"captf.io/captf/internal/runner/result"
)

// Step names as they appear in results, events and metrics (package
// result's).
const (
	StepPrepare          = result.StepPrepare
	StepInit             = result.StepInit
	StepForceUnlock      = result.StepForceUnlock
	StepPlan             = result.StepPlan
	StepShowJSON         = result.StepShowJSON
	StepApply            = result.StepApply
	StepApplyRefreshOnly = result.StepApplyRefreshOnly
	StepDestroy          = result.StepDestroy
	StepStatePush        = result.StepStatePush
	StepStateList        = result.StepStateList
)

// Env carries what a run needs from its process.
type Env struct {
	// Environ is the container's environment (os.Environ()).
	Environ []string
	// Stdout and Stderr are the pod log.
	Stdout, Stderr io.Writer
	// Stop is closed when the runner receives SIGTERM.
	Stop <-chan struct{}
}

// run is one `runner run`.
type run struct {
	o       Options
	env     Env
	p       *prepared
	x       *executor
	ev      *events
	started time.Time
	result  Result
}

// Run runs one operation and returns its result document, which the caller
// writes to the termination message, and the process exit code.
func Run(o Options, env Env) (Result, int) {
	r := &run{o: o, env: env, started: time.Now()}
	r.result = Result{Version: ResultVersion, Op: o.Op, Image: Image{Ref: o.Image}, Runtime: Runtime{Command: o.Bin}}
	if err := CheckLayout(o.Module, o.Bin[0]); err != nil {
		return r.fail(KindImageLayout, "", err.Error())
	}
	p, err := prepare(o, env.Environ)
	if err != nil {
		return r.fail(KindStep, StepPrepare, err.Error())
	}
	r.p = p
	r.result.Image.ProvidersMirror = p.mirror
	if len(p.env.Dropped) > 0 {
		fmt.Fprintf(env.Stderr, "%s: %s\n", EnvDroppedMessage, strings.Join(p.env.Dropped, ", "))
	}
	r.x = &executor{bin: o.Bin, root: p.root, env: p.env.Env, log: env.Stdout, errLog: env.Stderr, stop: env.Stop, stopTimeout: o.StopTimeout}
	r.result.Runtime.Version = r.runtimeVersion()
	r.ev = newEvents(o, env.Stderr)
	r.ev.post(false, EventRunStarted, "Run", fmt.Sprintf("%s with image %s, runtime %s", o.Op, o.Image, r.result.Runtime.Version))
	if why, err := r.chunkedState(); err != nil || why != "" {
		if err != nil {
			why = "checking the state before the runtime reads it: " + err.Error()
		}
		return r.fail(KindStep, StepPrepare, why)
	}
	if !r.step(r.initCommand()) {
		return r.finish()
	}
	if o.ForceUnlock != "" && !r.forceUnlock() {
		return r.finish()
	}
	switch o.Op {
	case OpApply:
		if o.guarded() {
			r.guardedApply()
		} else if r.step(r.validate()) {
			r.step(r.locking(StepApply, "apply", "-auto-approve", "-var-file="+TfvarsFile))
		}
	case OpPlan:
		r.previewPlan()
	case OpDestroy:
		r.step(r.locking(StepDestroy, "destroy", "-auto-approve", "-var-file="+TfvarsFile))
	case OpRefresh:
		r.step(r.refreshOnly())
	case OpDrift:
		r.drift()
	case OpRestore:
		r.restore()
	}
	return r.finish()
}

func (r *run) stopped() bool {
	select {
	case <-r.env.Stop:
		return true
	default:
		return false
	}
}

// step runs a command, records it, and reports whether the run goes on.
// A failure records the error with its curated summary.
func (r *run) step(c command) bool {
	_, ok := r.exec(c)
	return ok
}

func (r *run) exec(c command) (outcome, bool) {
	if r.result.Error != nil {
		return outcome{}, false
	}
	if r.stopped() {
		r.result.Error = &RunError{Kind: KindInterrupted, Tail: "stopped by SIGTERM before step " + c.name + " started"}
		return outcome{}, false
	}
	r.ev.post(false, EventStepStarted, c.name, "step "+c.name)
	out := r.x.run(c)
	r.result.Steps = append(r.result.Steps, Step{Name: c.name, Exit: out.exit, Seconds: out.seconds})
	if c.name == StepApply || c.name == StepDestroy {
		r.result.Changes = parseChanges(out.stdoutTail)
		if ch := r.result.Changes; ch != nil {
			r.ev.post(false, EventResourcesChanged, c.name, fmt.Sprintf("%d added, %d changed, %d destroyed", ch.Add, ch.Change, ch.Destroy))
		}
	}
	switch {
	case out.interrupted:
		r.result.Error = &RunError{Kind: KindInterrupted, Step: c.name,
			Tail: r.p.redactor.Redact(fmt.Sprintf("stopped by SIGTERM during step %s (exit %d)", c.name, out.exit))}
	case out.startErr != nil:
		r.result.Error = &RunError{Kind: KindStep, Step: c.name, Tail: r.p.redactor.Redact("cannot start the runtime: " + out.startErr.Error())}
	case !out.ok(c):
		r.result.Error = &RunError{Kind: KindStep, Step: c.name, Tail: Summary(StepOutput{
			Step: c.name, Exit: out.exit, Stdout: out.stdout, Stderr: out.stderr.Bytes(), StderrTruncated: out.stderr.Truncated(),
		}, r.p.redactor)}
	}
	if r.result.Error != nil && writesState(c.name) {
		r.rescue()
	}
	if r.result.Error == nil && (writesState(c.name) || c.name == StepStatePush) {
		r.releaseSurplus()
	}
	if r.result.Error == nil {
		r.ev.post(false, EventStepSucceeded, c.name, fmt.Sprintf("step %s exited %d after %.1fs", c.name, out.exit, out.seconds))
	} else {
		r.ev.post(true, EventStepFailed, c.name, r.result.Error.Tail)
	}
	return out, r.result.Error == nil
}

func writesState(step string) bool {
	return step == StepApply || step == StepApplyRefreshOnly || step == StepDestroy
}

// rescue saves a state the backend rejected, when the runtime left one, and
// says so first in the summary: it is what the user must act on.
func (r *run) rescue() {
	if _, err := os.Stat(filepath.Join(r.p.root, ErroredStateFile)); err != nil {
		return
	}
	ctx, cancel := r.rescueContext()
	defer cancel()
	res, err := rescueErroredState(ctx, r.p.root, r.o.BackendConfig)
	var note string
	if err != nil {
		note = "the backend rejected the state and saving it failed (" + err.Error() + "); errored.tfstate is in the Job's work volume"
	} else {
		r.result.Rescue = res
		note = fmt.Sprintf("the backend rejected the state (serial %d); it was saved as state backup %s: restore it with captf.io/restore-state=%d (a state over 1 MiB needs a Terraform image first)", res.Serial, res.Backup, res.Serial)
	}
	fmt.Fprintln(r.env.Stderr, "Rescue:", note)
	r.result.Error.Tail = capSummary(note+"; "+r.result.Error.Tail, SummaryMaxBytes)
}

// rescueContext bounds saving a rejected state. The state dies with the pod,
// so a runner that is not stopping waits as long as a loaded API server needs
// (rescueTimeout); once SIGTERM arrives, the pod's grace period leaves it 30
// seconds after the runtime's stop timeout (rescueStoppingTimeout).
func (r *run) rescueContext() (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(context.Background(), rescueTimeout)
	go func() {
		select {
		case <-r.env.Stop:
		case <-ctx.Done():
			return
		}
		t := time.NewTimer(rescueStoppingTimeout)
		defer t.Stop()
		select {
		case <-t.C:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

const (
	rescueTimeout         = 3 * time.Minute
	rescueStoppingTimeout = 20 * time.Second
)

func (r *run) fail(kind ErrorKind, step, msg string) (Result, int) {
	var red *Redactor
	if r.p != nil {
		red = r.p.redactor
	}
	r.result.Error = &RunError{Kind: kind, Step: step, Tail: capSummary(red.Redact(singleLine(msg)), SummaryMaxBytes)}
	return r.finish()
}

func (r *run) finish() (Result, int) {
	if r.result.Steps == nil {
		r.result.Steps = []Step{}
	}
	took := time.Since(r.started).Round(100 * time.Millisecond)
	if r.result.Error != nil {
		r.ev.post(true, EventRunFinished, "Run", fmt.Sprintf("%s ended %s after %s: %s", r.o.Op, r.result.Error.Kind, took, r.result.Error.Tail))
		return r.result, ExitFailure
	}
	r.ev.post(false, EventRunFinished, "Run", fmt.Sprintf("%s succeeded in %s", r.o.Op, took))
	return r.result, ExitOK
}

// versionTimeout bounds the informational version step.
const versionTimeout = 30 * time.Second

// runtimeVersion runs `version -json` once; its outcome never fails the run.
func (r *run) runtimeVersion() string {
	if r.stopped() {
		return ""
	}
	out := r.x.run(command{name: "version", args: []string{"version", "-json"}, stdout: captured, timeout: versionTimeout})
	var v struct {
		Terraform string `json:"terraform_version"`
	}
	if out.exit != 0 || json.Unmarshal(out.stdout, &v) != nil {
		return ""
	}
	return v.Terraform
}

func (r *run) initCommand() command {
	args := []string{"init", "-input=false", "-no-color", r.o.lockFlag()}
	for _, bc := range r.o.BackendConfig {
		args = append(args, "-backend-config="+bc)
	}
	return command{name: StepInit, args: args}
}

// locking is a command that takes the state lock: the subcommand, the
// common flags, then the rest (flags before a positional plan file).
func (r *run) locking(name, sub string, rest ...string) command {
	args := append([]string{sub, "-input=false", "-no-color", r.o.lockFlag()}, rest...)
	return command{name: name, args: args}
}

func (r *run) validate() command {
	return command{name: StepValidate, args: []string{"validate", "-json", "-no-color"}, stdout: capturedAndLogged}
}

func (r *run) refreshOnly() command {
	return r.locking(StepApplyRefreshOnly, "apply", "-refresh-only", "-auto-approve", "-var-file="+TfvarsFile)
}

// forceUnlock clears a stale lock; a lock another holder already released
// counts as success (the step keeps its real exit code).
func (r *run) forceUnlock() bool {
	return r.step(command{
		name: StepForceUnlock, args: []string{"force-unlock", "-force", r.o.ForceUnlock},
		acceptFailure: func(o outcome) bool { return alreadyUnlocked(string(o.stderr.Bytes()) + string(o.stdoutTail)) },
	})
}

// alreadyUnlocked recognises the runtimes' answers to unlocking a lock
// that is no longer held, or held under another ID.
func alreadyUnlocked(output string) bool {
	text := strings.ToLower(StripANSI(output))
	for _, s := range []string{"already unlocked", "does not match existing lock", "lock not found"} {
		if strings.Contains(text, s) {
			return true
		}
	}
	return false
}

func (r *run) planFile() string { return filepath.Join(r.o.Workdir, PlanFile) }

// restore pushes the reassembled backup and lists what the state holds.
func (r *run) restore() {
	if !r.step(command{name: StepStatePush, args: []string{"state", "push", "-force", r.o.lockFlag(), RestoreFile}}) {
		return
	}
	out, ok := r.exec(command{name: StepStateList, args: []string{"state", "list"}})
	if !ok {
		return
	}
	if r.o.RestoreResources > 0 && strings.TrimSpace(string(out.stdoutTail)) == "" {
		r.result.Error = &RunError{Kind: KindStep, Step: StepStateList,
			Tail: fmt.Sprintf("the restored state lists no resource, but the backup recorded %d", r.o.RestoreResources)}
	}
}

var changesLine = regexp.MustCompile(`Resources: (?:(\d+) imported, )?(?:(\d+) added, (\d+) changed, )?(\d+) destroyed`)

// parseChanges reads the final summary line of apply or destroy.
func parseChanges(stdout []byte) *Changes {
	m := changesLine.FindAllStringSubmatch(StripANSI(string(stdout)), -1)
	if len(m) == 0 {
		return nil
	}
	last := m[len(m)-1]
	n := func(s string) int { v, _ := strconv.Atoi(s); return v }
	c := &Changes{Add: n(last[2]), Change: n(last[3]), Destroy: n(last[4])}
	if last[1] != "" {
		imported := n(last[1])
		c.Import = &imported
	}
	return c
}
