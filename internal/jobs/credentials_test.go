package jobs

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/utils/ptr"
)

func TestWithCredentials(t *testing.T) {
	const mirror = "captf-creds-aws"
	wantVolume := corev1.Volume{Name: "creds", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
		SecretName: mirror, DefaultMode: ptr.To[int32](0o440),
	}}}
	wantMount := corev1.VolumeMount{Name: "creds", MountPath: "/var/run/captf/credentials", ReadOnly: true}
	wantEnvFrom := corev1.EnvFromSource{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: mirror}}}
	workVolume := corev1.Volume{Name: "work", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}

	testCases := []struct {
		name      string
		pod       corev1.PodSpec
		container string
		wantOK    bool
		want      corev1.PodSpec
	}{
		{
			name:      "adds envFrom, volume and mount to the named container only",
			pod:       corev1.PodSpec{Containers: []corev1.Container{{Name: "helper"}, {Name: "source"}}, Volumes: []corev1.Volume{workVolume}},
			container: "source",
			wantOK:    true,
			want: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "helper"}, {Name: "source", EnvFrom: []corev1.EnvFromSource{wantEnvFrom}, VolumeMounts: []corev1.VolumeMount{wantMount}}},
				Volumes:    []corev1.Volume{workVolume, wantVolume},
			},
		},
		{
			name: "is idempotent and replaces a stale creds volume and mount",
			pod: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "source", EnvFrom: []corev1.EnvFromSource{wantEnvFrom},
					VolumeMounts: []corev1.VolumeMount{{Name: "creds", MountPath: "/elsewhere"}}}},
				Volumes: []corev1.Volume{{Name: "creds", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "old"}}}},
			},
			container: "source",
			wantOK:    true,
			want: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "source", EnvFrom: []corev1.EnvFromSource{wantEnvFrom}, VolumeMounts: []corev1.VolumeMount{wantMount}}},
				Volumes:    []corev1.Volume{wantVolume},
			},
		},
		{
			name:      "an unknown container changes nothing",
			pod:       corev1.PodSpec{Containers: []corev1.Container{{Name: "source"}}},
			container: "main",
			wantOK:    false,
			want:      corev1.PodSpec{Containers: []corev1.Container{{Name: "source"}}},
		},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			pod := tc.pod
			if ok := WithCredentials(&pod, tc.container, mirror); ok != tc.wantOK {
				t.Fatalf("WithCredentials returned %v, want %v", ok, tc.wantOK)
			}
			if !equality.Semantic.DeepEqual(pod, tc.want) {
				t.Fatalf("pod spec:\n got %+v\nwant %+v", pod, tc.want)
			}
			again := *pod.DeepCopy()
			WithCredentials(&again, tc.container, mirror)
			if !equality.Semantic.DeepEqual(again, pod) {
				t.Fatal("a second call changed the pod spec")
			}
		})
	}
}
