package localnode

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// The service account token the node mounts, as the ServiceAccount
// admission plugin (off in this control plane) and a kubelet would.
const (
	tokenVolume     = "kube-api-access-localnode"
	TokenMountPath  = "/var/run/secrets/kubernetes.io/serviceaccount"
	tokenExpiration = int64(3607)
)

// emptyDirMode is the mode a kubelet gives an emptyDir.
const emptyDirMode = 0o777

// volumePath is where the volume named name of a pod lives on the host.
func volumePath(podDir, name string) string {
	return filepath.Join(podDir, "volumes", name)
}

// writeVolumes writes every volume of the pod under podDir/volumes, one
// directory each, replacing what an earlier attempt wrote: emptyDirs empty
// with mode 0777, Secrets and ConfigMaps (projected too) as files with
// their modes, read live. With an fsGroup, and when the node runs as root,
// every volume is owned by it as a kubelet makes it.
func writeVolumes(ctx context.Context, cs kubernetes.Interface, podDir string, pod *corev1.Pod) error {
	root := filepath.Join(podDir, "volumes")
	if err := os.RemoveAll(root); err != nil {
		return err
	}
	for i := range pod.Spec.Volumes {
		vol := &pod.Spec.Volumes[i]
		dir := volumePath(podDir, vol.Name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		if vol.EmptyDir != nil {
			if err := os.Chmod(dir, emptyDirMode); err != nil {
				return err
			}
			continue
		}
		files, err := volumeFiles(ctx, cs, pod.Namespace, vol)
		if err != nil {
			return fmt.Errorf("volume %q: %w", vol.Name, err)
		}
		if err := writeFiles(dir, files); err != nil {
			return fmt.Errorf("volume %q: %w", vol.Name, err)
		}
	}
	if g := pod.Spec.SecurityContext; g != nil && g.FSGroup != nil && os.Geteuid() == 0 {
		for _, vol := range pod.Spec.Volumes {
			if err := setOwnership(volumePath(podDir, vol.Name), int(*g.FSGroup), vol.EmptyDir == nil); err != nil {
				return err
			}
		}
	}
	return nil
}

func writeFiles(dir string, files []file) error {
	for _, f := range files {
		rel := filepath.Clean("/" + f.path)
		dest := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(dest, f.data, f.mode); err != nil {
			return err
		}
		if err := os.Chmod(dest, f.mode); err != nil {
			return err
		}
	}
	return nil
}

// setOwnership gives a volume to the pod's fsGroup the way a kubelet does:
// group-owned, group-readable (and writable unless readOnly), directories
// setgid.
func setOwnership(dir string, gid int, readOnly bool) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if err := os.Lchown(p, -1, gid); err != nil {
			return err
		}
		if info.Mode()&fs.ModeSymlink != 0 {
			return nil
		}
		mask := fs.FileMode(0o660)
		if readOnly {
			mask = 0o440
		}
		if d.IsDir() {
			mask |= fs.ModeSetgid | 0o110
		}
		return os.Chmod(p, info.Mode()|mask)
	})
}

// subPathSource is the host path a mount of the volume shows: the volume's
// directory, or its subPath inside it.
func subPathSource(podDir string, m corev1.VolumeMount) (string, error) {
	dir := volumePath(podDir, m.Name)
	if m.SubPath == "" {
		return dir, nil
	}
	rel := filepath.Clean("/" + m.SubPath)
	if strings.Contains(m.SubPath, "..") {
		return "", fmt.Errorf("the subPath %q of mount %s leaves its volume", m.SubPath, m.Name)
	}
	p := filepath.Join(dir, rel)
	if _, err := os.Stat(p); os.IsNotExist(err) {
		// A kubelet creates a missing subPath as a directory.
		if err := os.MkdirAll(p, 0o755); err != nil {
			return "", err
		}
	}
	return p, nil
}

// automountToken reports whether the pod gets a service account token: it
// does not opt out, and no container mounts something at the token's path
// already. The ServiceAccount's own opt-out is read by addToken.
func automountToken(pod *corev1.Pod) bool {
	if a := pod.Spec.AutomountServiceAccountToken; a != nil && !*a {
		return false
	}
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range cs {
			for _, m := range c.VolumeMounts {
				if filepath.Clean(m.MountPath) == TokenMountPath {
					return false
				}
			}
		}
	}
	return true
}

// addToken gives the pod (a copy the node owns) its service account token,
// as the ServiceAccount admission plugin and a kubelet would: a volume
// mounted read-only at the standard path in every container, holding a
// token bound to the pod, the API server's CA and the namespace. A missing
// ServiceAccount is a mount failure the node retries.
func addToken(ctx context.Context, cs kubernetes.Interface, podDir string, pod *corev1.Pod, ca []byte) error {
	name := pod.Spec.ServiceAccountName
	if name == "" {
		name = "default"
	}
	sa, err := cs.CoreV1().ServiceAccounts(pod.Namespace).Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return fmt.Errorf("%w: serviceaccount %q not found", errMount, name)
	case err != nil:
		return err
	case sa.AutomountServiceAccountToken != nil && !*sa.AutomountServiceAccountToken && pod.Spec.AutomountServiceAccountToken == nil:
		return nil
	}
	tr, err := cs.CoreV1().ServiceAccounts(pod.Namespace).CreateToken(ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{
			ExpirationSeconds: ptr.To(tokenExpiration),
			BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("requesting a token of serviceaccount %q: %w", name, err)
	}
	dir := volumePath(podDir, tokenVolume)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	files := []file{
		{path: "token", data: []byte(tr.Status.Token), mode: 0o644},
		{path: "ca.crt", data: ca, mode: 0o644},
		{path: "namespace", data: []byte(pod.Namespace), mode: 0o644},
	}
	if err := writeFiles(dir, files); err != nil {
		return err
	}
	if g := pod.Spec.SecurityContext; g != nil && g.FSGroup != nil && os.Geteuid() == 0 {
		if err := setOwnership(dir, int(*g.FSGroup), true); err != nil {
			return err
		}
	}
	mount := corev1.VolumeMount{Name: tokenVolume, MountPath: TokenMountPath, ReadOnly: true}
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			if !slices.ContainsFunc(cs[i].VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == tokenVolume }) {
				cs[i].VolumeMounts = append(cs[i].VolumeMounts, mount)
			}
		}
	}
	return nil
}
