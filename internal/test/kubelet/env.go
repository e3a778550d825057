package kubelet

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/kubernetes"
)

// errConfig is an env source that cannot be resolved yet: the container
// waits in CreateContainerConfigError, as with a real kubelet.
var errConfig = errors.New("container config error")

// containerEnv resolves c's envFrom, then its env (which wins), reading
// Secrets and ConfigMaps live and expanding $(NAME) references as a
// kubelet does. Values that are paths under one of c's mounts are moved
// into root, since the container's filesystem lives there.
func containerEnv(ctx context.Context, cs kubernetes.Interface, root rootfs, pod *corev1.Pod, c *corev1.Container) ([]string, error) {
	var out []string
	vars := map[string]string{}
	add := func(name, value string) {
		vars[name] = value
		out = append(out, name+"="+value)
	}
	for _, from := range c.EnvFrom {
		kind, name, optional := "ConfigMap", "", false
		if from.SecretRef != nil {
			kind, name, optional = "Secret", from.SecretRef.Name, from.SecretRef.Optional != nil && *from.SecretRef.Optional
		} else if from.ConfigMapRef != nil {
			name, optional = from.ConfigMapRef.Name, from.ConfigMapRef.Optional != nil && *from.ConfigMapRef.Optional
		}
		data, err := readSource(ctx, cs, pod.Namespace, kind, name)
		switch {
		case apierrors.IsNotFound(err) && optional:
			continue
		case apierrors.IsNotFound(err):
			return nil, fmt.Errorf("%w: %s %q not found", errConfig, strings.ToLower(kind), name)
		case err != nil:
			return nil, err
		}
		for k, v := range data {
			add(from.Prefix+k, string(v))
		}
	}
	for _, e := range c.Env {
		value, skip, err := envValue(ctx, cs, pod, e, vars)
		if err != nil {
			return nil, err
		}
		if !skip {
			add(e.Name, mountedPath(root, c, value))
		}
	}
	return out, nil
}

// envValue is one env entry's value; skip is true for an optional
// reference to something missing.
func envValue(ctx context.Context, cs kubernetes.Interface, pod *corev1.Pod, e corev1.EnvVar, vars map[string]string) (value string, skip bool, err error) {
	from := e.ValueFrom
	if from == nil {
		return expand(e.Value, vars), false, nil
	}
	kind, name, key, optional := "", "", "", false
	switch {
	case from.FieldRef != nil:
		v, err := fieldValue(pod, from.FieldRef.FieldPath)
		return v, false, err
	case from.SecretKeyRef != nil:
		r := from.SecretKeyRef
		kind, name, key, optional = "Secret", r.Name, r.Key, r.Optional != nil && *r.Optional
	case from.ConfigMapKeyRef != nil:
		r := from.ConfigMapKeyRef
		kind, name, key, optional = "ConfigMap", r.Name, r.Key, r.Optional != nil && *r.Optional
	default:
		return "", false, fmt.Errorf("%w: env %s: the test kubelet resolves only values, fields, Secret and ConfigMap keys", errConfig, e.Name)
	}
	data, err := readSource(ctx, cs, pod.Namespace, kind, name)
	if err != nil && !apierrors.IsNotFound(err) {
		return "", false, err
	}
	v, ok := data[key]
	switch {
	case ok:
		return string(v), false, nil
	case optional:
		return "", true, nil
	}
	return "", false, fmt.Errorf("%w: env %s: key %q of %s %q not found", errConfig, e.Name, key, strings.ToLower(kind), name)
}

// fieldValue resolves the downward API fields a kubelet offers as env.
func fieldValue(pod *corev1.Pod, field string) (string, error) {
	for _, m := range []struct {
		prefix string
		values map[string]string
	}{{"metadata.labels", pod.Labels}, {"metadata.annotations", pod.Annotations}} {
		if rest, ok := strings.CutPrefix(field, m.prefix+"['"); ok && strings.HasSuffix(rest, "']") {
			return m.values[strings.TrimSuffix(rest, "']")], nil
		}
	}
	switch field {
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return string(pod.UID), nil
	case "spec.nodeName":
		return pod.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	case "status.hostIP", "status.podIP":
		return hostIP, nil
	}
	return "", fmt.Errorf("%w: the field %s is not supported by the test kubelet", errConfig, field)
}

// expand replaces $(NAME) with the value of an earlier variable; $$ is a
// literal $, and a reference to an unknown name stays as written.
func expand(s string, vars map[string]string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(s[i:], ')')
			name := ""
			if end > 0 {
				name = s[i+2 : i+end]
			}
			if v, ok := vars[name]; ok && end > 0 {
				b.WriteString(v)
				i += end
			} else {
				b.WriteByte('$')
			}
		default:
			b.WriteByte('$')
		}
	}
	return b.String()
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
