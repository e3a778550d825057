package runner

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"
)

// Default paths of the Job's pod (the image contract and the Job's mounts).
const (
	DefaultBin         = "/captf/runtime"
	DefaultConfig      = "/captf/config"
	DefaultModule      = "/captf/module"
	DefaultProviders   = "/captf/providers"
	DefaultWorkdir     = "/captf/work"
	DefaultResult      = "/dev/termination-log"
	DefaultPlanKeyFile = "/captf/plan-key/key"
	// DefaultCredentials is where the Job mounts the identity's mirror, one
	// file per key; the runner reads it only to know which values to redact.
	DefaultCredentials = "/var/run/captf/credentials"
)

// Operations the runner runs.
const (
	OpApply   = "apply"
	OpPlan    = "plan"
	OpDestroy = "destroy"
	OpRefresh = "refresh"
	OpDrift   = "drift"
	OpRestore = "restore"
)

var operations = []string{OpApply, OpPlan, OpDestroy, OpRefresh, OpDrift, OpRestore}

// Options are the flags of `runner run`.
type Options struct {
	Op               string
	Bin              []string
	Config           string
	Module           string
	Providers        string
	Workdir          string
	Image            string
	Result           string
	BackendConfig    []string
	LockTimeout      time.Duration
	StopTimeout      time.Duration
	ForceUnlock      string
	GuardDeletes     bool
	InputsHash       string
	AllowDeletesHash string
	ExpectPlan       string
	PlanKeyFile      string
	RestoreChunks    int
	RestoreResources int
	Credentials      string
	// EventObject (<apiVersion>/<kind>/<namespace>/<name>/<uid>) and JobName
	// say where best-effort progress events go; none without EventObject.
	EventObject string
	JobName     string
	// RedactEnv names environment variables (the object's spec.jobs.env)
	// whose values are redacted whatever their name (from 4 bytes).
	RedactEnv []string
}

// stringArray is a repeatable string flag.
type stringArray struct {
	values *[]string
	set    bool
}

func (s *stringArray) String() string {
	if s.values == nil {
		return ""
	}
	return strings.Join(*s.values, ",")
}

func (s *stringArray) Set(v string) error {
	if !s.set {
		*s.values, s.set = nil, true
	}
	*s.values = append(*s.values, v)
	return nil
}

// ErrUsage marks a command line the runner cannot run: exit code 2.
var ErrUsage = errors.New("usage")

// ParseRunFlags parses the arguments of `runner run`. Errors wrap ErrUsage.
func ParseRunFlags(args []string, stderr io.Writer) (Options, error) {
	o := Options{Bin: []string{DefaultBin}, Credentials: DefaultCredentials}
	fs := flag.NewFlagSet("runner run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.Op, "op", "", "operation: "+strings.Join(operations, ", "))
	fs.Var(&stringArray{values: &o.Bin}, "bin", "runtime argv, one flag per element (default /captf/runtime)")
	fs.StringVar(&o.Config, "config", DefaultConfig, "per-run Secret mount")
	fs.StringVar(&o.Module, "module", DefaultModule, "module directory")
	fs.StringVar(&o.Providers, "providers", DefaultProviders, "provider mirror directory, used when it exists")
	fs.StringVar(&o.Workdir, "workdir", DefaultWorkdir, "parent of the generated root")
	fs.StringVar(&o.Image, "image", "", "module image reference, echoed in the result")
	fs.StringVar(&o.Result, "result", DefaultResult, "where to write the result document")
	fs.Var(&stringArray{values: &o.BackendConfig}, "backend-config", "passed to init as -backend-config=<value>; repeatable")
	fs.DurationVar(&o.LockTimeout, "lock-timeout", 5*time.Minute, "state lock timeout of the locking steps")
	fs.DurationVar(&o.StopTimeout, "stop-timeout", time.Minute, "grace after SIGTERM before the runtime is killed")
	fs.StringVar(&o.ForceUnlock, "force-unlock", "", "stale lock ID to clear after init")
	fs.BoolVar(&o.GuardDeletes, "guard-deletes", false, "apply: stop before a plan that deletes or replaces, unless allowed")
	fs.StringVar(&o.InputsHash, "inputs-hash", "", "hash of the rendered inputs")
	fs.StringVar(&o.AllowDeletesHash, "allow-deletes-hash", "", "approved inputs hash that allows a destructive plan")
	fs.StringVar(&o.ExpectPlan, "expect-plan", "", "apply: the approved plan hash; any other plan stops with plan-changed")
	fs.StringVar(&o.PlanKeyFile, "plan-key-file", DefaultPlanKeyFile, "HMAC key of plan fingerprints")
	fs.IntVar(&o.RestoreChunks, "restore-chunks", 0, "restore: number of chunks under <config>/restore")
	fs.IntVar(&o.RestoreResources, "restore-resources", 0, "restore: the backup's resource count; non-zero requires state list to show one")
	fs.StringVar(&o.EventObject, "event-object", "", "<apiVersion>/<kind>/<namespace>/<name>/<uid> of the object progress events concern; none when empty")
	fs.StringVar(&o.JobName, "job-name", "", "the Job's name, related to the progress events")
	fs.Var(&stringArray{values: &o.RedactEnv}, "redact-env", "name of an environment variable whose value (from 4 bytes) is redacted whatever its name; repeatable")
	if err := fs.Parse(args); err != nil {
		return o, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("%w: unexpected arguments %q", ErrUsage, fs.Args())
	}
	return o, o.validate()
}

func (o Options) validate() error {
	known := false
	for _, op := range operations {
		known = known || o.Op == op
	}
	switch {
	case o.Op == "":
		return fmt.Errorf("%w: --op is required (%s)", ErrUsage, strings.Join(operations, ", "))
	case !known:
		return fmt.Errorf("%w: unknown --op %q: want one of %s", ErrUsage, o.Op, strings.Join(operations, ", "))
	case len(o.Bin) == 0 || o.Bin[0] == "":
		return fmt.Errorf("%w: --bin is empty", ErrUsage)
	case o.LockTimeout < 0 || o.StopTimeout < 0:
		return fmt.Errorf("%w: --lock-timeout and --stop-timeout cannot be negative", ErrUsage)
	case o.RestoreChunks < 0 || o.RestoreResources < 0:
		return fmt.Errorf("%w: --restore-chunks and --restore-resources cannot be negative", ErrUsage)
	case o.Op == OpRestore && o.RestoreChunks == 0:
		return fmt.Errorf("%w: restore needs --restore-chunks (the number of backup chunks)", ErrUsage)
	}
	return nil
}

// guarded reports whether an apply plans first and checks the plan.
func (o Options) guarded() bool {
	return o.Op == OpApply && (o.GuardDeletes || o.ExpectPlan != "")
}

// needsPlanKey reports whether the run computes a plan fingerprint, which
// is never done without a key.
func (o Options) needsPlanKey() bool {
	return o.Op == OpPlan || o.guarded()
}

// lockFlag is the -lock-timeout flag of the locking steps, in whole
// seconds, rounded up so that a wait is never shortened.
func (o Options) lockFlag() string {
	return fmt.Sprintf("-lock-timeout=%ds", int64((o.LockTimeout+time.Second-1)/time.Second))
}
