package localnode

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"

	"captf.io/captf/internal/jobs"
	"captf.io/captf/internal/runner"
)

// inProcess runs the runner of each Job in this process (ModeInProcess).
type inProcess struct{ n *Node }

func (*inProcess) mode() Mode   { return ModeInProcess }
func (*inProcess) tokens() bool { return false }

// admit stands in for init containers (the one of a Job copies the runner,
// which runs here instead) and runs only `runner run` containers.
func (*inProcess) admit(_ *corev1.Pod, c *corev1.Container, init bool) (bool, error) {
	if init {
		return true, nil
	}
	if argv := append(append([]string{}, c.Command...), c.Args...); len(argv) >= 2 && argv[1] == "run" {
		return false, nil
	}
	return false, errors.New("the CAPTF local node runs in-process only containers whose command is `runner run`")
}

// rootfs is a container's filesystem: a directory standing for "/".
type rootfs string

// path returns where a path of the container lives on the host.
func (r rootfs) path(p string) string {
	return filepath.Join(string(r), filepath.Clean("/"+p))
}

// start lays out the container's filesystem and runs the runner with the
// container's arguments in a goroutine.
func (r *inProcess) start(s *startSpec) (process, error) {
	root := rootfs(filepath.Join(s.dir, "root"))
	if err := layout(root, s); err != nil {
		return nil, err
	}
	p := &goroutine{stop: make(chan struct{}), exited: make(chan struct{}), out: s.out}
	o, perr := runner.ParseRunFlags(s.argv[2:], s.out)
	environ := hostEnv(root, s)
	go func() {
		defer close(p.exited)
		if perr != nil {
			p.code = flagsFailure(o.Op, perr, s.out, s.termLog)
			return
		}
		o = hostOptions(o, root, r.n.opts.Kubeconfig)
		res, code := r.execute(s, o, environ, p.stop)
		res = containerView(res, root)
		if err := runner.WriteResult(o.Result, res); err != nil {
			fmt.Fprintln(s.out, "runner run:", err)
			code = runner.ExitFailure
		}
		p.code = code
	}()
	return p, nil
}

// execute runs the runner until it returns; a bug in it is a failed run
// (and a problem of the node), as the runner binary turns a panic into one.
func (r *inProcess) execute(s *startSpec, o runner.Options, environ []string, stop chan struct{}) (res runner.Result, code int) {
	defer func() {
		if p := recover(); p != nil {
			r.n.problem("the runner panicked in pod %s/%s: %v\n%s", s.pod.Namespace, s.pod.Name, p, debug.Stack())
			res, code = runner.Result{Version: runner.ResultVersion, Op: o.Op, Steps: []runner.Step{}, Error: &runner.RunError{
				Kind: runner.KindStep, Tail: "the runner failed (internal error); see the Job's logs",
			}}, runner.ExitFailure
		}
	}()
	return runner.Run(o, runner.Env{Environ: environ, Stdout: s.out, Stderr: s.out, Stop: stop})
}

// goroutine is a runner running in this process.
type goroutine struct {
	stop, exited chan struct{}
	once         sync.Once
	code         int
	out          io.Writer
}

func (p *goroutine) done() <-chan struct{} { return p.exited }
func (p *goroutine) exitCode() int         { return p.code }

// signal closes the runner's Stop channel, as its SIGTERM handler does. A
// goroutine cannot be killed: the runner's own stop timeout applies.
func (p *goroutine) signal(kill bool) {
	if kill {
		return
	}
	p.once.Do(func() {
		fmt.Fprintf(p.out, "Received terminated: stopping the runtime\n")
		close(p.stop)
	})
}

// layout builds the container's filesystem: the image's paths (the module
// copied, the rest linked), every volume mount copied in place (never
// linked, so that relative paths between them, such as the generated
// root's ../../module, resolve as in the pod) and the termination log
// linked to the host file the node reads.
func layout(root rootfs, s *startSpec) error {
	for p, host := range s.image.Paths {
		if err := os.MkdirAll(filepath.Dir(root.path(p)), 0o755); err != nil {
			return err
		}
		if p == jobs.ModuleDir {
			if err := copyTree(root.path(p), host); err != nil {
				return fmt.Errorf("copying the module %s: %w", host, err)
			}
			continue
		}
		if err := os.Symlink(host, root.path(p)); err != nil {
			return err
		}
	}
	for _, m := range s.c.VolumeMounts {
		src, err := subPathSource(s.podDir, m)
		if err != nil {
			return err
		}
		if err := copyTree(root.path(m.MountPath), src); err != nil {
			return fmt.Errorf("mount %s: %w", m.Name, err)
		}
	}
	log := root.path(terminationLogPath(s.c))
	if err := os.MkdirAll(filepath.Dir(log), 0o755); err != nil {
		return err
	}
	return os.Symlink(s.termLog, log)
}

func terminationLogPath(c *corev1.Container) string {
	if c.TerminationMessagePath != "" {
		return c.TerminationMessagePath
	}
	return corev1.TerminationMessagePathDefault
}

// copyTree copies src into dest, keeping modes (a directory's once its
// content is written).
func copyTree(dest, src string) error {
	type dir struct {
		path string
		mode fs.FileMode
	}
	var dirs []dir
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dest, rel)
		info, err := os.Stat(p)
		if err != nil {
			return err
		}
		if info.IsDir() {
			dirs = append(dirs, dir{target, info.Mode().Perm()})
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.WriteFile(target, data, info.Mode().Perm()); err != nil {
			return err
		}
		return os.Chmod(target, info.Mode().Perm())
	})
	for i := len(dirs) - 1; i >= 0 && err == nil; i-- {
		err = os.Chmod(dirs[i].path, dirs[i].mode)
	}
	return err
}

// hostEnv is the container's env with the values of its env entries that
// are paths under one of its mounts moved into root.
func hostEnv(root rootfs, s *startSpec) []string {
	own := map[string]bool{}
	for _, e := range s.c.Env {
		own[e.Name] = true
	}
	out := make([]string, 0, len(s.env))
	for _, kv := range s.env {
		if name, value, ok := strings.Cut(kv, "="); ok && own[name] {
			kv = name + "=" + mountedPath(root, s.c, value)
		}
		out = append(out, kv)
	}
	return out
}

// mountedPath moves an absolute path under one of c's mounts into root.
func mountedPath(root rootfs, c *corev1.Container, value string) string {
	if !strings.HasPrefix(value, "/") {
		return value
	}
	clean := path.Clean(value)
	for _, m := range c.VolumeMounts {
		mp := path.Clean(m.MountPath)
		if clean == mp || strings.HasPrefix(clean, mp+"/") {
			return root.path(clean)
		}
	}
	return value
}

// hostOptions moves every path of the runner's options into the
// container's filesystem, and points the kubernetes backend at the node's
// kubeconfig instead of the in-cluster config it has no token for.
// Everything else stays as the pod says.
func hostOptions(o runner.Options, root rootfs, kubeconfig string) runner.Options {
	o.Bin = append([]string{root.path(o.Bin[0])}, o.Bin[1:]...)
	for _, p := range []*string{&o.Config, &o.Module, &o.Providers, &o.Workdir, &o.Result, &o.PlanKeyFile, &o.Credentials} {
		*p = root.path(*p)
	}
	backend := make([]string, 0, len(o.BackendConfig))
	for _, v := range o.BackendConfig {
		key, value, _ := strings.Cut(v, "=")
		switch key {
		case "in_cluster_config":
			if value == "true" {
				v = "config_path=" + kubeconfig
			}
		case "config_path":
			v = "config_path=" + root.path(value)
		}
		backend = append(backend, v)
	}
	o.BackendConfig = backend
	return o
}

// containerView shows the result as the container saw it: the runtime's
// path and the paths a failure summary names are those of the container's
// filesystem, not of the directory standing for it.
func containerView(res runner.Result, root rootfs) runner.Result {
	prefix := string(root)
	res.Runtime.Command = append([]string(nil), res.Runtime.Command...)
	for i, arg := range res.Runtime.Command {
		res.Runtime.Command[i] = strings.ReplaceAll(arg, prefix, "")
	}
	if res.Error != nil {
		e := *res.Error
		e.Tail = strings.ReplaceAll(e.Tail, prefix, "")
		res.Error = &e
	}
	return res
}

// flagsFailure is what `runner run` does with arguments it cannot parse:
// a result naming the flags step, and exit code 2 for a usage error.
func flagsFailure(op string, err error, log io.Writer, result string) int {
	fmt.Fprintln(log, "runner run:", err)
	tail, _, _ := strings.Cut(err.Error(), "\n")
	if len(tail) > runner.SummaryMaxBytes {
		tail = tail[:runner.SummaryMaxBytes]
	}
	res := runner.Result{Version: runner.ResultVersion, Op: op, Steps: []runner.Step{},
		Error: &runner.RunError{Kind: runner.KindStep, Step: "flags", Tail: tail}}
	if werr := runner.WriteResult(result, res); werr != nil {
		fmt.Fprintln(log, "runner run:", werr)
	}
	if errors.Is(err, runner.ErrUsage) {
		return runner.ExitUsage
	}
	return runner.ExitFailure
}
