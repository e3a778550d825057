package kubelet

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"captf.io/captf/internal/runner"
)

// rootfs is a container's filesystem: a directory standing for "/".
type rootfs string

// path returns where a path of the container lives on the host.
func (r rootfs) path(p string) string {
	return filepath.Join(string(r), filepath.Clean("/"+p))
}

// errMount is a volume that cannot be mounted yet (a Secret that does not
// exist): the kubelet retries, as a real one does.
var errMount = errors.New("mount failed")

// layout builds the container's filesystem: the image's content at the
// image contract's paths, every volume mount of c, and an empty
// termination log. Volumes are written in place, never linked, so that
// relative paths between them (the generated root's ../../module) resolve
// as in the pod.
func layout(ctx context.Context, cs kubernetes.Interface, root rootfs, tools string, img image, pod *corev1.Pod, c *corev1.Container) error {
	if err := os.MkdirAll(root.path(filepath.Dir(runner.DefaultModule)), 0o755); err != nil {
		return err
	}
	if err := os.CopyFS(root.path(runner.DefaultModule), os.DirFS(img.ModuleDir)); err != nil {
		return fmt.Errorf("copying the module %s: %w", img.ModuleDir, err)
	}
	if err := os.Symlink(img.bin, root.path(runner.DefaultBin)); err != nil {
		return err
	}
	if st, err := os.Stat(filepath.Join(tools, "providers")); err == nil && st.IsDir() {
		if err := os.Symlink(filepath.Join(tools, "providers"), root.path(runner.DefaultProviders)); err != nil {
			return err
		}
	}
	for _, m := range c.VolumeMounts {
		if err := mount(ctx, cs, root, pod, m); err != nil {
			return err
		}
	}
	log := root.path(terminationLogPath(c))
	if err := os.MkdirAll(filepath.Dir(log), 0o755); err != nil {
		return err
	}
	return os.WriteFile(log, nil, 0o666)
}

func terminationLogPath(c *corev1.Container) string {
	if c.TerminationMessagePath != "" {
		return c.TerminationMessagePath
	}
	return corev1.TerminationMessagePathDefault
}

// mount writes one volume at its mount path.
func mount(ctx context.Context, cs kubernetes.Interface, root rootfs, pod *corev1.Pod, m corev1.VolumeMount) error {
	var vol *corev1.Volume
	for i := range pod.Spec.Volumes {
		if pod.Spec.Volumes[i].Name == m.Name {
			vol = &pod.Spec.Volumes[i]
		}
	}
	if vol == nil {
		return fmt.Errorf("the mount %s names no volume of the pod", m.Name)
	}
	target := root.path(m.MountPath)
	if vol.EmptyDir != nil {
		return os.MkdirAll(target, 0o777)
	}
	files, err := volumeFiles(ctx, cs, pod.Namespace, vol)
	if err != nil {
		return fmt.Errorf("volume %q: %w", vol.Name, err)
	}
	if err := os.MkdirAll(target, 0o755); err != nil {
		return err
	}
	for _, f := range files {
		rel := f.path
		if m.SubPath != "" {
			var ok bool
			if rel, ok = underSubPath(f.path, m.SubPath); !ok {
				continue
			}
		}
		dest := filepath.Join(target, rel)
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

// underSubPath returns p relative to sub when it lies under it.
func underSubPath(p, sub string) (string, bool) {
	sub = strings.Trim(filepath.Clean(sub), "/")
	rel, err := filepath.Rel(sub, p)
	if err != nil || strings.HasPrefix(rel, "..") {
		return "", false
	}
	return rel, true
}

// file is one file of a Secret, ConfigMap or projected volume.
type file struct {
	path string
	data []byte
	mode fs.FileMode
}

// volumeFiles reads the files of a Secret, ConfigMap or projected volume,
// live from the API server.
func volumeFiles(ctx context.Context, cs kubernetes.Interface, ns string, vol *corev1.Volume) ([]file, error) {
	switch {
	case vol.Secret != nil:
		s := vol.Secret
		return sourceFiles(ctx, cs, ns, source{kind: "Secret", name: s.SecretName, items: s.Items, optional: s.Optional}, s.DefaultMode)
	case vol.ConfigMap != nil:
		c := vol.ConfigMap
		return sourceFiles(ctx, cs, ns, source{kind: "ConfigMap", name: c.Name, items: c.Items, optional: c.Optional}, c.DefaultMode)
	case vol.Projected != nil:
		var all []file
		for _, p := range vol.Projected.Sources {
			var src source
			switch {
			case p.Secret != nil:
				src = source{kind: "Secret", name: p.Secret.Name, items: p.Secret.Items, optional: p.Secret.Optional}
			case p.ConfigMap != nil:
				src = source{kind: "ConfigMap", name: p.ConfigMap.Name, items: p.ConfigMap.Items, optional: p.ConfigMap.Optional}
			default:
				return nil, errors.New("the test kubelet projects only Secrets and ConfigMaps")
			}
			files, err := sourceFiles(ctx, cs, ns, src, vol.Projected.DefaultMode)
			if err != nil {
				return nil, err
			}
			all = append(all, files...)
		}
		return all, nil
	}
	return nil, errors.New("the test kubelet mounts only emptyDir, Secret, ConfigMap and projected volumes")
}

// source is a Secret or ConfigMap a volume shows as files.
type source struct {
	kind, name string
	items      []corev1.KeyToPath
	optional   *bool
}

func sourceFiles(ctx context.Context, cs kubernetes.Interface, ns string, src source, defaultMode *int32) ([]file, error) {
	data, err := readSource(ctx, cs, ns, src.kind, src.name)
	optional := src.optional != nil && *src.optional
	switch {
	case apierrors.IsNotFound(err) && optional:
		return nil, nil
	case apierrors.IsNotFound(err):
		return nil, fmt.Errorf("%w: %s %q not found", errMount, src.kind, src.name)
	case err != nil:
		return nil, err
	}
	mode := fs.FileMode(0o644)
	if defaultMode != nil {
		mode = fs.FileMode(*defaultMode)
	}
	var files []file
	if len(src.items) == 0 {
		for k, v := range data {
			files = append(files, file{path: k, data: v, mode: mode})
		}
		return files, nil
	}
	for _, it := range src.items {
		v, ok := data[it.Key]
		if !ok {
			if optional {
				continue
			}
			return nil, fmt.Errorf("%w: %s %q has no key %q", errMount, src.kind, src.name, it.Key)
		}
		m := mode
		if it.Mode != nil {
			m = fs.FileMode(*it.Mode)
		}
		files = append(files, file{path: it.Path, data: v, mode: m})
	}
	return files, nil
}

// readSource reads a Secret's or ConfigMap's data, live.
func readSource(ctx context.Context, cs kubernetes.Interface, ns, kind, name string) (map[string][]byte, error) {
	if kind == "Secret" {
		s, err := cs.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		return s.Data, nil
	}
	c, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	data := map[string][]byte{}
	for k, v := range c.Data {
		data[k] = []byte(v)
	}
	for k, v := range c.BinaryData {
		data[k] = v
	}
	return data, nil
}
