package localnode

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// errMount is a volume that cannot be written yet (a Secret that does not
// exist): the node retries, as a kubelet does.
var errMount = errors.New("mount failed")

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
				return nil, errors.New("the local node projects only Secrets and ConfigMaps")
			}
			files, err := sourceFiles(ctx, cs, ns, src, vol.Projected.DefaultMode)
			if err != nil {
				return nil, err
			}
			all = append(all, files...)
		}
		return all, nil
	}
	return nil, errors.New("the local node mounts only emptyDir, Secret, ConfigMap and projected volumes")
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
