package localnode

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"captf.io/captf/internal/runner"
)

// What start did with a container.
type startResult int

const (
	startStarted startResult = iota
	// startStoodIn: the runtime stands in for the container, which is
	// reported completed without running.
	startStoodIn
	// startStuck: the container cannot start, for good (the pod stays
	// Pending until deleted).
	startStuck
	// startAbandoned: the pod was deleted, or the node stopped, first.
	startAbandoned
)

// running is a started container.
type running struct {
	c    *corev1.Container
	st   *container
	proc process
	run  *Run
	tail *runner.TailBuffer
	log  *os.File
	// termLog is the host file of its termination message.
	termLog string
	stopped bool
}

// start starts one container once its image is found and its env
// resolves, and reports it running.
func (w *worker) start(c *corev1.Container, st *container, init bool) (*running, startResult) {
	standIn, err := w.n.rt.admit(w.pod, c, init)
	switch {
	case err != nil:
		reason := reasonCreateError
		if errors.Is(err, errConfig) {
			reason = reasonConfigError
		}
		return nil, w.cannotStart(st, reason, err.Error())
	case standIn:
		now := time.Now()
		st.waiting, st.started, st.exited, st.code, st.reason, st.finished = nil, now, true, 0, reasonCompleted, now
		st.imageID = refDigest(c.Image)
		return nil, startStoodIn
	}
	img, ok := w.pull(c, st)
	if !ok {
		return nil, startAbandoned
	}
	env, ok := w.resolveEnv(c, st)
	if !ok {
		return nil, startAbandoned
	}
	r := &running{c: c, st: st, tail: runner.NewTailBuffer(logTailBytes)}
	if r.log, err = openLog(w.n.opts.StateDir, w.pod.Namespace, w.pod.Name, c.Name); err != nil {
		w.n.problem("opening the log of %s/%s: %v", w.pod.Name, c.Name, err)
		return nil, w.cannotStart(st, reasonCreateError, err.Error())
	}
	if !init && c.Name == w.pod.Spec.Containers[0].Name {
		_ = os.WriteFile(filepath.Join(filepath.Dir(r.log.Name()), defaultFile), []byte(c.Name), 0o600)
	}
	cdir := filepath.Join(w.dir, "c", c.Name)
	r.termLog = filepath.Join(cdir, "termination-log")
	if err := createTermLog(r.termLog); err != nil {
		_ = r.log.Close()
		return nil, w.cannotStart(st, reasonCreateError, err.Error())
	}
	argv := commandLine(c, env)
	r.proc, err = w.n.rt.start(&startSpec{
		pod: w.pod, c: c, image: img, podDir: w.dir, dir: cdir, argv: argv, env: env,
		out: io.MultiWriter(r.log, r.tail), termLog: r.termLog,
	})
	if err != nil {
		_ = r.log.Close()
		return nil, w.cannotStart(st, reasonCreateError, err.Error())
	}
	st.waiting, st.started, st.imageID = nil, time.Now(), img.id
	w.n.event(w.pod, corev1.EventTypeNormal, "Started", "Started container "+c.Name)
	if !init {
		r.run = &Run{Namespace: w.pod.Namespace, Pod: w.pod.Name, Container: c.Name, Job: jobName(w.pod), Labels: w.pod.Labels,
			Op: runnerOp(argv), Image: c.Image, ImageID: img.id, InitImageIDs: map[string]string{}, ExitCode: -1, Started: st.started}
		for _, ic := range w.view.init {
			r.run.InitImageIDs[ic.name] = ic.imageID
		}
		w.n.mu.Lock()
		w.n.runs = append(w.n.runs, r.run)
		w.n.mu.Unlock()
	} else {
		w.report(false)
	}
	return r, startStarted
}

// cannotStart reports the container waiting for reason, with an event.
func (w *worker) cannotStart(st *container, reason, msg string) startResult {
	w.n.event(w.pod, corev1.EventTypeWarning, "Failed", msg)
	st.waiting = &corev1.ContainerStateWaiting{Reason: reason, Message: msg}
	w.report(false)
	return startStuck
}

// pull pulls c's image, as a kubelet does: a failed pull shows
// ErrImagePull, then ImagePullBackOff, and is tried again after a backoff
// that doubles from PullBackoff up to PullBackoffMax. False when the pod
// was deleted, or the node stopped, first.
func (w *worker) pull(c *corev1.Container, st *container) (image, bool) {
	backoff := w.n.opts.PullBackoff
	for {
		img, err := w.n.images.pull(c.Image)
		if err == nil {
			return img, true
		}
		msg := fmt.Sprintf("Failed to pull image %q: %v", c.Image, err)
		w.n.event(w.pod, corev1.EventTypeWarning, "Failed", msg)
		st.waiting = &corev1.ContainerStateWaiting{Reason: reasonErrImagePull, Message: msg}
		w.report(false)
		if !w.pauseFor(backoff / 2) {
			return image{}, false
		}
		msg = fmt.Sprintf("Back-off pulling image %q", c.Image)
		w.n.event(w.pod, corev1.EventTypeNormal, "BackOff", msg)
		st.waiting = &corev1.ContainerStateWaiting{Reason: reasonImagePullBackOff, Message: msg}
		w.report(false)
		if !w.pauseFor(backoff - backoff/2) {
			return image{}, false
		}
		backoff = min(2*backoff, w.n.opts.PullBackoffMax)
	}
}

// maxPullBackoff is the longest wait between two pulls of an image, as a
// kubelet's.
const maxPullBackoff = 5 * time.Minute

// resolveEnv resolves c's env, waiting in CreateContainerConfigError while
// a Secret or ConfigMap it names is missing.
func (w *worker) resolveEnv(c *corev1.Container, st *container) ([]string, bool) {
	last := ""
	for {
		env, err := containerEnv(w.n.ctx, w.n.cs, w.n.config.Host, w.pod, c)
		if err == nil {
			return env, true
		}
		if !errors.Is(err, errConfig) && w.n.ctx.Err() == nil {
			w.n.problem("resolving the env of %s/%s: %v", w.pod.Name, c.Name, err)
		}
		if msg := err.Error(); msg != last {
			last = msg
			w.n.event(w.pod, corev1.EventTypeWarning, "Failed", "Error: "+msg)
			st.waiting = &corev1.ContainerStateWaiting{Reason: reasonConfigError, Message: msg}
			w.report(false)
		}
		if !w.pause() {
			return nil, false
		}
	}
}

func createTermLog(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(path, nil, 0o666); err != nil {
		return err
	}
	return os.Chmod(path, 0o666) // whatever user the container runs as
}

// supervise waits for the containers to end. A deletion of the pod, the
// node's stop or the pod's active deadline is delivered as SIGTERM, then
// SIGKILL once the grace period is over.
func (w *worker) supervise(rs []*running) {
	all := allDone(rs)
	var deadline <-chan time.Time
	if d := w.pod.Spec.ActiveDeadlineSeconds; d != nil {
		timer := time.NewTimer(time.Until(w.started.Add(time.Duration(*d) * time.Second)))
		defer timer.Stop()
		deadline = timer.C
	}
	grace := w.specGrace()
	select {
	case <-all:
		return
	case <-w.deleted:
		if g := w.grace.Load(); g >= 0 {
			grace = time.Duration(g) * time.Second
		}
	case <-w.n.ctx.Done():
		grace = min(grace, w.n.opts.StopGrace)
	case <-deadline:
		w.view.reason, w.view.detail = reasonDeadlineExceeded, "Pod was active on the node longer than the specified deadline"
		w.n.event(w.pod, corev1.EventTypeNormal, reasonDeadlineExceeded, w.view.detail)
	}
	w.stopWithin(rs, all, grace)
}

// allDone is closed once every container exited.
func allDone(rs []*running) <-chan struct{} {
	all := make(chan struct{})
	go func() {
		for _, r := range rs {
			<-r.proc.done()
		}
		close(all)
	}()
	return all
}

// stopWithin delivers SIGTERM to the containers, and SIGKILL to those
// still running after grace; it returns once all exited.
func (w *worker) stopWithin(rs []*running, all <-chan struct{}, grace time.Duration) {
	w.stopAll(rs)
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-all:
	case <-timer.C:
		for _, r := range rs {
			r.proc.signal(true)
		}
		<-all
	}
}

// specGrace is the pod's terminationGracePeriodSeconds (default 30s).
func (w *worker) specGrace() time.Duration {
	if g := w.pod.Spec.TerminationGracePeriodSeconds; g != nil {
		return time.Duration(*g) * time.Second
	}
	return 30 * time.Second
}

// stopAll delivers SIGTERM to running containers.
func (w *worker) stopAll(rs []*running) {
	for _, r := range rs {
		select {
		case <-r.proc.done():
			continue
		default:
		}
		r.stopped = true
		w.n.event(w.pod, corev1.EventTypeNormal, "Killing", "Stopping container "+r.c.Name)
		r.proc.signal(false)
	}
}

// finish records the end of a container that exited.
func (w *worker) finish(r *running) {
	code := r.proc.exitCode()
	written, _ := readAtMost(r.termLog, maxMessageBytes)
	_ = r.log.Close()
	log := string(r.tail.Bytes())
	st := r.st
	st.exited, st.code, st.finished = true, code, time.Now()
	st.message = message(r.c, written, code, log)
	st.reason = reasonCompleted
	if code != 0 {
		st.reason = reasonError
	}
	if r.run == nil {
		return
	}
	var res runner.Result
	if r.run.Op != "" {
		_ = json.Unmarshal([]byte(st.message), &res)
	}
	w.n.mu.Lock()
	defer w.n.mu.Unlock()
	r.run.ExitCode, r.run.Stopped, r.run.Result, r.run.Message = code, r.stopped, res, st.message
	r.run.Log, r.run.Finished = log, st.finished
}

// readAtMost reads up to limit bytes of a file.
func readAtMost(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	return io.ReadAll(io.LimitReader(f, limit+1))
}

// runnerOp is the --op of a `runner run` command line, else "".
func runnerOp(argv []string) string {
	if len(argv) < 2 || argv[1] != "run" {
		return ""
	}
	for _, a := range argv[2:] {
		for _, p := range []string{"--op=", "-op="} {
			if v, ok := strings.CutPrefix(a, p); ok {
				return v
			}
		}
	}
	return ""
}
