package localnode

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Pod logs are kept at <state dir>/logs/<namespace>/<pod>/<container>.log,
// with the name of the pod's default container (its first) in defaultFile.
const (
	logsDir     = "logs"
	defaultFile = ".default"
)

func podLogDir(stateDir, ns, pod string) string {
	return filepath.Join(stateDir, logsDir, ns, pod)
}

// openLog creates the log file of a container.
func openLog(stateDir, ns, pod, container string) (*os.File, error) {
	dir := podLogDir(stateDir, ns, pod)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	return os.OpenFile(filepath.Join(dir, container+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
}

// ErrNoLog is returned when no log is kept for what was asked.
var ErrNoLog = errors.New("no log kept")

// ReadLog returns the output a container of a pod wrote on the node whose
// state directory is stateDir, while the pod runs or after, until the node
// starts again. container "" is the pod's first container. pod may also be
// the name of the Job that made the pod: its most recent pod is read.
func ReadLog(stateDir, namespace, pod, container string) ([]byte, error) {
	dir, err := findPodLogs(stateDir, namespace, pod)
	if err != nil {
		return nil, err
	}
	if container == "" {
		name, err := os.ReadFile(filepath.Join(dir, defaultFile))
		if err != nil {
			return nil, fmt.Errorf("%w for pod %s/%s: %w", ErrNoLog, namespace, filepath.Base(dir), err)
		}
		container = string(name)
	}
	data, err := os.ReadFile(filepath.Join(dir, filepath.Base(container)+".log"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w for container %s of pod %s/%s", ErrNoLog, container, namespace, filepath.Base(dir))
	}
	return data, err
}

// findPodLogs is the log directory of the pod, or of the newest pod whose
// name is the given name and a suffix (a Job's pod).
func findPodLogs(stateDir, ns, name string) (string, error) {
	if name == "" || strings.ContainsAny(name, `/\`) || name == "." || name == ".." {
		return "", fmt.Errorf("%w: %q is not a pod name", ErrNoLog, name)
	}
	exact := podLogDir(stateDir, ns, name)
	if st, err := os.Stat(exact); err == nil && st.IsDir() {
		return exact, nil
	}
	entries, err := os.ReadDir(filepath.Join(stateDir, logsDir, ns))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	best, newest := "", int64(0)
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), name+"-") {
			continue
		}
		info, err := e.Info()
		if err == nil && info.ModTime().UnixNano() >= newest {
			best, newest = e.Name(), info.ModTime().UnixNano()
		}
	}
	if best == "" {
		return "", fmt.Errorf("%w for pod %s/%s in %s", ErrNoLog, ns, name, filepath.Join(stateDir, logsDir))
	}
	return podLogDir(stateDir, ns, best), nil
}
