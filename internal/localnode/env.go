package localnode

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/kubernetes"
)

// errConfig is an env source that cannot be resolved yet: the container
// waits in CreateContainerConfigError, as with a real kubelet.
var errConfig = errors.New("container config error")

// defaultPath is the PATH a container runtime gives a container whose
// image sets none.
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// containerEnv is the environment c starts with: what the runtime and the
// kubelet add (PATH, HOSTNAME, the API server's service variables), then
// c's envFrom, then its env (later entries win). Secrets and ConfigMaps are
// read live and $(NAME) references expanded as a kubelet does.
func containerEnv(ctx context.Context, cs kubernetes.Interface, apiHost string, pod *corev1.Pod, c *corev1.Container) ([]string, error) {
	var out []string
	vars := map[string]string{}
	add := func(name, value string) {
		vars[name] = value
		out = append(out, name+"="+value)
	}
	add("PATH", defaultPath)
	add("HOSTNAME", hostname(pod))
	if host, port, ok := servicePort(apiHost); ok {
		add("KUBERNETES_SERVICE_HOST", host)
		add("KUBERNETES_SERVICE_PORT", port)
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
			add(e.Name, value)
		}
	}
	return out, nil
}

// servicePort splits the API server's URL into the in-cluster service
// variables a kubelet gives every container.
func servicePort(apiHost string) (host, port string, ok bool) {
	u, err := url.Parse(apiHost)
	if err != nil || u.Hostname() == "" {
		return "", "", false
	}
	port = u.Port()
	if port == "" {
		port = "443"
	}
	return u.Hostname(), port, true
}

// hostname is the pod's hostname: its spec.hostname, else its name, cut
// to the 63 bytes of a DNS label.
func hostname(pod *corev1.Pod) string {
	h := pod.Spec.Hostname
	if h == "" {
		h = pod.Name
	}
	if len(h) > 63 {
		h = strings.TrimRight(h[:63], "-.")
	}
	return h
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
		return "", false, fmt.Errorf("%w: env %s: the local node resolves only values, fields, Secret and ConfigMap keys", errConfig, e.Name)
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
	return "", fmt.Errorf("%w: the field %s is not supported by the local node", errConfig, field)
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

// envMap is an environment as a map, the last entry of a name winning.
func envMap(environ []string) map[string]string {
	m := make(map[string]string, len(environ))
	for _, e := range environ {
		if k, v, ok := strings.Cut(e, "="); ok {
			m[k] = v
		}
	}
	return m
}

// commandLine is c's command and args with $(NAME) expanded from its env,
// as a kubelet runs them.
func commandLine(c *corev1.Container, environ []string) []string {
	vars := envMap(environ)
	argv := make([]string, 0, len(c.Command)+len(c.Args))
	for _, a := range append(append([]string{}, c.Command...), c.Args...) {
		argv = append(argv, expand(a, vars))
	}
	return argv
}
