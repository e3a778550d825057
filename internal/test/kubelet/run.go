package kubelet

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"captf.io/captf/internal/runner"
)

// runPod reports the pod Running, runs the runner with the container's
// arguments in this process, and reports the pod's end with the result
// document as its termination message.
func (w *worker) runPod(c *corev1.Container, args []string, img image, root rootfs, environ []string) {
	k := w.k
	ns, name, uid := w.uidOf()
	ids := imageIDs(w.pod, c, img)
	started := time.Now()
	err := updateStatus(k.ctx, k.cs, ns, name, uid, func(p *corev1.Pod) { running(p, started, ids) })
	if apierrors.IsNotFound(err) || k.ctx.Err() != nil {
		return
	}
	if err != nil {
		k.problem("reporting pod %s/%s Running: %v", ns, name, err)
	}
	k.event(w.pod, corev1.EventTypeNormal, "Started", "Started container "+c.Name)

	log := runner.NewTailBuffer(logTailBytes)
	o, perr := runner.ParseRunFlags(args, log)
	run := &Run{Namespace: ns, Pod: name, Job: jobName(w.pod), Op: o.Op, Image: c.Image, ExitCode: -1, Started: started}
	k.mu.Lock()
	k.runs = append(k.runs, run)
	k.mu.Unlock()

	var res runner.Result
	var code int
	var stopped bool
	if perr != nil {
		res, code = flagsFailure(o.Op, perr, log, root.path(terminationLogPath(c)))
	} else {
		o = k.hostOptions(o, root)
		res, code, stopped = w.execute(c, o, environ, log)
		res = containerView(res, root)
		if err := runner.WriteResult(o.Result, res); err != nil {
			fmt.Fprintln(log, "runner run:", err)
			code = runner.ExitFailure
		}
	}
	written, _ := os.ReadFile(root.path(terminationLogPath(c)))
	msg := message(c, written, code, string(log.Bytes()))

	k.mu.Lock()
	run.ExitCode, run.Stopped, run.Result, run.Message = code, stopped, res, msg
	run.Log, run.Finished = string(log.Bytes()), time.Now()
	k.mu.Unlock()

	ctx, cancel := finalContext()
	defer cancel()
	err = updateStatus(ctx, k.cs, ns, name, uid, func(p *corev1.Pod) { terminated(p, c.Name, started, code, msg, ids) })
	if err != nil && !apierrors.IsNotFound(err) {
		k.problem("reporting the end of pod %s/%s: %v", ns, name, err)
	}
}

// execute runs the runner until it returns; a deletion of the pod, or the
// kubelet's stop, is delivered as SIGTERM (closing Env.Stop).
func (w *worker) execute(c *corev1.Container, o runner.Options, environ []string, log io.Writer) (runner.Result, int, bool) {
	stop := make(chan struct{})
	done := make(chan struct{})
	var res runner.Result
	var code int
	go func() {
		defer close(done)
		defer func() {
			if p := recover(); p != nil {
				w.k.problem("the runner panicked in pod %s/%s: %v\n%s", w.pod.Namespace, w.pod.Name, p, debug.Stack())
				res, code = runner.Result{Version: runner.ResultVersion, Op: o.Op, Steps: []runner.Step{}, Error: &runner.RunError{
					Kind: runner.KindStep, Tail: "the runner failed (internal error); see the Job's logs",
				}}, runner.ExitFailure
			}
		}()
		res, code = runner.Run(o, runner.Env{Environ: environ, Stdout: log, Stderr: log, Stop: stop})
	}()
	select {
	case <-done:
		return res, code, false
	case <-w.deleted:
	case <-w.k.ctx.Done():
	}
	w.k.event(w.pod, corev1.EventTypeNormal, "Killing", "Stopping container "+c.Name)
	fmt.Fprintf(log, "Received terminated: stopping the runtime\n")
	close(stop)
	<-done
	return res, code, true
}

// hostOptions moves every path of the runner's options into the
// container's filesystem, and points the kubernetes backend at the test
// API server instead of the in-cluster config it has no service account
// token for. Everything else stays as the pod says.
func (k *Kubelet) hostOptions(o runner.Options, root rootfs) runner.Options {
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
				v = "config_path=" + k.kubeconfig
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
func flagsFailure(op string, err error, log io.Writer, result string) (runner.Result, int) {
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
		return res, runner.ExitUsage
	}
	return res, runner.ExitFailure
}

// jobName is the name of the Job that owns the pod.
func jobName(pod *corev1.Pod) string {
	if name := pod.Labels[batchv1.JobNameLabel]; name != "" {
		return name
	}
	return pod.Labels["job-name"]
}
