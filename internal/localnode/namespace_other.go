//go:build !linux

package localnode

import (
	"errors"

	corev1 "k8s.io/api/core/v1"
)

// namespaces is ModeNamespace, which needs Linux.
type namespaces struct{ n *Node }

// NamespaceSupport says why ModeNamespace cannot run here.
func NamespaceSupport() error {
	return errors.New("private mount namespaces need Linux")
}

func (*namespaces) mode() Mode   { return ModeNamespace }
func (*namespaces) tokens() bool { return true }

func (*namespaces) admit(*corev1.Pod, *corev1.Container, bool) (bool, error) {
	return false, NamespaceSupport()
}

func (*namespaces) start(*startSpec) (process, error) { return nil, NamespaceSupport() }
