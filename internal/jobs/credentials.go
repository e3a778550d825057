package jobs

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

const (
	// CredentialsVolume is the name of the volume holding the credentials
	// mirror in a Job's pod.
	CredentialsVolume = "creds"
	// CredentialsMountPath is where the mirror's keys appear as files.
	CredentialsMountPath = "/var/run/captf/credentials"
	// credentialsMode lets the owner and the group (fsGroup) read the files.
	credentialsMode int32 = 0o440
)

// WithCredentials delivers the credentials mirror Secret named mirror to
// the named container of pod in two ways at once: envFrom, so that every
// key becomes an environment variable (the Job's explicit env still wins,
// and the runner removes TF_* and KUBE_* keys it does not own), and a
// read-only Secret volume "creds" mounted at /var/run/captf/credentials
// with mode 0440, one file per key. Calling it again changes nothing. It
// returns false when pod has no container of that name.
func WithCredentials(pod *corev1.PodSpec, container, mirror string) bool {
	idx := -1
	for i := range pod.Containers {
		if pod.Containers[i].Name == container {
			idx = i
			break
		}
	}
	if idx < 0 {
		return false
	}
	setCredentialsVolume(pod, mirror)
	c := &pod.Containers[idx]
	setEnvFrom(c, mirror)
	setCredentialsMount(c)
	return true
}

func setCredentialsVolume(pod *corev1.PodSpec, mirror string) {
	vol := corev1.Volume{
		Name: CredentialsVolume,
		VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName:  mirror,
			DefaultMode: ptr.To(credentialsMode),
		}},
	}
	for i := range pod.Volumes {
		if pod.Volumes[i].Name == CredentialsVolume {
			pod.Volumes[i] = vol
			return
		}
	}
	pod.Volumes = append(pod.Volumes, vol)
}

func setEnvFrom(c *corev1.Container, mirror string) {
	for _, e := range c.EnvFrom {
		if e.SecretRef != nil && e.SecretRef.Name == mirror && e.Prefix == "" {
			return
		}
	}
	c.EnvFrom = append(c.EnvFrom, corev1.EnvFromSource{
		SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: mirror}},
	})
}

func setCredentialsMount(c *corev1.Container) {
	mount := corev1.VolumeMount{Name: CredentialsVolume, MountPath: CredentialsMountPath, ReadOnly: true}
	for i := range c.VolumeMounts {
		if c.VolumeMounts[i].Name == CredentialsVolume {
			c.VolumeMounts[i] = mount
			return
		}
	}
	c.VolumeMounts = append(c.VolumeMounts, mount)
}
