package localnode

import (
	"io"

	corev1 "k8s.io/api/core/v1"
)

// A containerRuntime runs the containers of pods on this node.
type containerRuntime interface {
	mode() Mode
	// admit says how the runtime takes a container: it runs it, stands in
	// for it (reported completed without running), or refuses it (an error
	// wrapping errConfig is a configuration error).
	admit(pod *corev1.Pod, c *corev1.Container, init bool) (standIn bool, err error)
	// tokens says whether pods get their service account token: only
	// processes that reach the API server as the pod need one.
	tokens() bool
	// start starts a container.
	start(s *startSpec) (process, error)
}

// startSpec is a container ready to start.
type startSpec struct {
	pod *corev1.Pod
	c   *corev1.Container
	// image is the container's image; podDir the pod's directory (its
	// volumes are under volumes/); dir the container's own directory.
	image       image
	podDir, dir string
	// argv is the command line, env the environment, both resolved.
	argv, env []string
	// out receives stdout and stderr.
	out io.Writer
	// termLog is the host file the container's terminationMessagePath is.
	termLog string
}

// process is a started container.
type process interface {
	// done is closed once the container exited.
	done() <-chan struct{}
	// exitCode is the container's exit code once done.
	exitCode() int
	// signal delivers SIGTERM, or SIGKILL when kill.
	signal(kill bool)
}

// newRuntime picks the runtime of a mode; ModeAuto takes the namespace
// runtime where it works and says so when it falls back.
func newRuntime(n *Node, mode Mode) (containerRuntime, error) {
	switch mode {
	case ModeInProcess:
		return &inProcess{n: n}, nil
	case ModeNamespace:
		if err := NamespaceSupport(); err != nil {
			return nil, err
		}
		return &namespaces{n: n}, nil
	}
	if err := NamespaceSupport(); err != nil {
		n.log.Info("Running Job pods in-process: private mount namespaces are not available", "reason", err.Error())
		return &inProcess{n: n}, nil
	}
	return &namespaces{n: n}, nil
}
