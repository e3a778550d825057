package localnode

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"

	corev1 "k8s.io/api/core/v1"
)

// namespaces runs each container as a process in a private mount and UTS
// namespace, chrooted into a root built for it (ModeNamespace).
type namespaces struct{ n *Node }

func (*namespaces) mode() Mode   { return ModeNamespace }
func (*namespaces) tokens() bool { return true }

// NamespaceSupport says why ModeNamespace cannot run here (nil when it
// can): private mount namespaces need root, and a kernel that lets this
// process unshare one.
func NamespaceSupport() error {
	if os.Geteuid() != 0 {
		return errors.New("private mount namespaces need root")
	}
	errc := make(chan error, 1)
	go func() {
		// Never unlocked: the thread leaves with this goroutine, and its
		// namespaces with it.
		runtime.LockOSThread()
		errc <- syscall.Unshare(syscall.CLONE_NEWNS | syscall.CLONE_NEWUTS)
	}()
	if err := <-errc; err != nil {
		return fmt.Errorf("unsharing the mount namespace: %w", err)
	}
	return nil
}

// admit runs every container that has a command (the local images have no
// entrypoint) and refuses one that must not run as root but would.
func (*namespaces) admit(pod *corev1.Pod, c *corev1.Container, _ bool) (bool, error) {
	if len(c.Command) == 0 {
		return false, errors.New("no command specified: the local node's images have no entrypoint")
	}
	sc := effectiveSecurity(pod, c)
	if sc.nonRoot && sc.uid == 0 {
		return false, fmt.Errorf("%w: container has runAsNonRoot and image will run as root (pod: %q, container: %s)",
			errConfig, pod.Namespace+"/"+pod.Name, c.Name)
	}
	return false, nil
}

// security is what the pod's and the container's security contexts say
// about the process.
type security struct {
	uid, gid       uint32
	groups         []uint32
	nonRoot        bool
	readOnlyRootFS bool
}

// effectiveSecurity merges the container's security context over the
// pod's; the local images run as root unless told otherwise.
func effectiveSecurity(pod *corev1.Pod, c *corev1.Container) security {
	var s security
	if p := pod.Spec.SecurityContext; p != nil {
		if p.RunAsUser != nil {
			s.uid = uint32(*p.RunAsUser)
		}
		if p.RunAsGroup != nil {
			s.gid = uint32(*p.RunAsGroup)
		}
		s.nonRoot = p.RunAsNonRoot != nil && *p.RunAsNonRoot
		for _, g := range p.SupplementalGroups {
			s.groups = append(s.groups, uint32(g))
		}
		if p.FSGroup != nil {
			s.groups = append(s.groups, uint32(*p.FSGroup))
		}
	}
	if sc := c.SecurityContext; sc != nil {
		if sc.RunAsUser != nil {
			s.uid = uint32(*sc.RunAsUser)
		}
		if sc.RunAsGroup != nil {
			s.gid = uint32(*sc.RunAsGroup)
		}
		if sc.RunAsNonRoot != nil {
			s.nonRoot = *sc.RunAsNonRoot
		}
		s.readOnlyRootFS = sc.ReadOnlyRootFilesystem != nil && *sc.ReadOnlyRootFilesystem
	}
	return s
}

// start builds the container's root and starts it, from a goroutine locked
// to its thread: the namespaces are the thread's, the process inherits
// them, and the thread waits for the process, so that the process's
// parent-death signal fires only when the node itself dies. When the
// container's process exits, what it left running in its process group is
// killed, as the end of a container's PID namespace does.
func (r *namespaces) start(s *startSpec) (process, error) {
	p := &nsProcess{exited: make(chan struct{})}
	out, in, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	started := make(chan error, 1)
	go func() {
		// Never unlocked: see NamespaceSupport.
		runtime.LockOSThread()
		cmd, err := enter(s, in)
		_ = in.Close() // the container holds it now
		if err != nil {
			_ = out.Close()
			started <- err
			return
		}
		p.pid = cmd.Process.Pid
		copied := make(chan struct{})
		go func() {
			_, _ = io.Copy(s.out, out)
			_ = out.Close()
			close(copied)
		}()
		started <- nil
		_ = cmd.Wait() // the exit status says it all
		p.code = exitStatus(cmd.ProcessState)
		_ = syscall.Kill(-p.pid, syscall.SIGKILL)
		<-copied
		close(p.exited)
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return p, nil
}

// enter unshares the calling thread's mount and UTS namespaces, builds the
// container's root in a tmpfs and starts the container chrooted into it.
func enter(s *startSpec, out *os.File) (*exec.Cmd, error) {
	if err := syscall.Unshare(syscall.CLONE_NEWNS | syscall.CLONE_NEWUTS); err != nil {
		return nil, fmt.Errorf("unsharing the mount namespace: %w", err)
	}
	if err := syscall.Sethostname([]byte(hostname(s.pod))); err != nil {
		return nil, fmt.Errorf("setting the hostname: %w", err)
	}
	// Nothing mounted from here on reaches the host.
	if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
		return nil, fmt.Errorf("making / private: %w", err)
	}
	root := filepath.Join(s.dir, "root")
	sec := effectiveSecurity(s.pod, s.c)
	if err := buildRoot(root, s, sec); err != nil {
		return nil, err
	}
	bin, err := lookPath(root, s.argv[0], envMap(s.env)["PATH"])
	if err != nil {
		return nil, err
	}
	dir := s.c.WorkingDir
	if dir == "" {
		dir = "/"
	}
	cmd := &exec.Cmd{
		Path: bin, Args: s.argv, Env: s.env, Dir: dir, Stdout: out, Stderr: out,
		SysProcAttr: &syscall.SysProcAttr{
			Chroot: root, Setpgid: true, Pdeathsig: syscall.SIGKILL,
			Credential: &syscall.Credential{Uid: sec.uid, Gid: sec.gid, Groups: sec.groups},
		},
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", s.argv[0], err)
	}
	return cmd, nil
}

// lookPath finds a command in the container's PATH, as a runtime does for
// a command without a slash.
func lookPath(root, name, pathEnv string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	for _, dir := range filepath.SplitList(pathEnv) {
		p := path.Join("/", dir, name)
		if st, err := os.Stat(filepath.Join(root, p)); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("executable file %q not found in $PATH", name)
}

// exitStatus is the exit code a kubelet reports: the process's, or 128
// plus the signal that killed it.
func exitStatus(st *os.ProcessState) int {
	if st == nil {
		return 128
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	if code := st.ExitCode(); code >= 0 {
		return code
	}
	return 128
}

// nsProcess is a container process.
type nsProcess struct {
	pid    int
	code   int
	exited chan struct{}
}

func (p *nsProcess) done() <-chan struct{} { return p.exited }
func (p *nsProcess) exitCode() int         { return p.code }

// signal sends SIGTERM to the container's process, or SIGKILL to its
// whole process group.
func (p *nsProcess) signal(kill bool) {
	if kill {
		_ = syscall.Kill(-p.pid, syscall.SIGKILL)
		return
	}
	select {
	case <-p.exited:
	default:
		_ = syscall.Kill(p.pid, syscall.SIGTERM)
	}
}
