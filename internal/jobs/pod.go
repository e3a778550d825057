package jobs

import (
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/pkg/state"
)

// Containers, volumes and paths of a Job's pod.
const (
	// RunnerContainer is the init container copying the runner binary.
	RunnerContainer = "runner"
	// SourceContainer runs the runner inside the module image.
	SourceContainer = "source"

	RunnerVolume  = "runner"
	WorkVolume    = "work"
	TmpVolume     = "tmp"
	ConfigVolume  = "config"
	PlanKeyVolume = "plan-key"

	RunnerDir      = "/captf/bin"
	RunnerPath     = RunnerDir + "/runner"
	RuntimePath    = "/captf/runtime"
	ModuleDir      = "/captf/module"
	ProvidersDir   = "/captf/providers"
	WorkDir        = "/captf/work"
	TmpDir         = "/tmp"
	ConfigDir      = "/captf/config"
	PlanKeyDir     = "/captf/plan-key"
	PlanKeyFile    = PlanKeyDir + "/key"
	RestoreSubdir  = "restore"
	runnerInImage  = "/runner"
	secretFileMode = int32(0o440)
)

// StopTimeout is the runner's grace between passing SIGTERM on to the
// runtime and killing it: the pod's grace minus a 30-second margin for the
// runner to write its result.
const StopTimeout = "570s"

// podSpec is the pod of a run, without credentials and plan key.
func podSpec(s Spec) corev1.PodSpec {
	return corev1.PodSpec{
		RestartPolicy:                 corev1.RestartPolicyNever,
		TerminationGracePeriodSeconds: ptr.To(TerminationGracePeriodSeconds),
		ServiceAccountName:            s.Policy.ServiceAccountName,
		ImagePullSecrets:              append([]corev1.LocalObjectReference(nil), s.Policy.ImagePullSecrets...),
		SecurityContext:               s.Policy.PodSecurityContext.DeepCopy(),
		InitContainers:                []corev1.Container{runnerContainer(s.RunnerImage)},
		Containers:                    []corev1.Container{sourceContainer(s)},
		Volumes:                       volumes(s),
	}
}

// runnerContainer copies the runner binary into the shared volume. It is
// fixed: the jobs policy does not reach it.
func runnerContainer(image string) corev1.Container {
	return corev1.Container{
		Name:         RunnerContainer,
		Image:        image,
		Command:      []string{runnerInImage, "copy", RunnerPath},
		VolumeMounts: []corev1.VolumeMount{{Name: RunnerVolume, MountPath: RunnerDir}},
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{
				corev1.ResourceCPU:    resource.MustParse("10m"),
				corev1.ResourceMemory: resource.MustParse("32Mi"),
			},
			Limits: corev1.ResourceList{
				corev1.ResourceCPU:    resource.MustParse("100m"),
				corev1.ResourceMemory: resource.MustParse("64Mi"),
			},
		},
		SecurityContext: &corev1.SecurityContext{
			RunAsNonRoot:             ptr.To(true),
			RunAsUser:                ptr.To(RunnerUID),
			ReadOnlyRootFilesystem:   ptr.To(true),
			AllowPrivilegeEscalation: ptr.To(false),
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		},
	}
}

// sourceContainer runs the runner in the module image; the image's own
// entrypoint never runs.
func sourceContainer(s Spec) corev1.Container {
	pull := s.PullPolicy
	if pull == "" {
		pull = corev1.PullIfNotPresent
	}
	return corev1.Container{
		Name:                     SourceContainer,
		Image:                    s.Image,
		ImagePullPolicy:          pull,
		Command:                  []string{RunnerPath, "run"},
		Args:                     runnerArgs(s),
		Env:                      sourceEnv(s),
		Resources:                *s.Policy.Resources.DeepCopy(),
		SecurityContext:          s.Policy.SecurityContext.DeepCopy(),
		TerminationMessagePolicy: corev1.TerminationMessageReadFile,
		VolumeMounts: []corev1.VolumeMount{
			{Name: RunnerVolume, MountPath: RunnerDir, ReadOnly: true},
			{Name: WorkVolume, MountPath: WorkDir},
			{Name: TmpVolume, MountPath: TmpDir},
			{Name: ConfigVolume, MountPath: ConfigDir, ReadOnly: true},
		},
	}
}

// runnerArgs returns the arguments of `runner run` for s, in the
// documented order: the fixed flags, the backend configuration, then the
// flags this run needs.
func runnerArgs(s Spec) []string {
	args := []string{
		"--op=" + string(s.Op),
		"--bin=" + RuntimePath,
		"--image=" + s.Image,
		"--module=" + ModuleDir,
		"--providers=" + ProvidersDir,
		"--workdir=" + WorkDir,
		"--config=" + ConfigDir,
		"--lock-timeout=" + strconv.Itoa(int(s.Policy.LockTimeoutSeconds)) + "s",
		"--stop-timeout=" + StopTimeout,
		"--backend-config=secret_suffix=" + s.StateSuffix,
		"--backend-config=namespace=" + s.JobNamespace(),
		"--backend-config=in_cluster_config=true",
		"--backend-config=labels=" + state.HCLMap(s.BackendLabels),
	}
	if s.ForceUnlock != "" {
		args = append(args, "--force-unlock="+s.ForceUnlock)
	}
	if s.Guard.Deletes {
		args = append(args, "--guard-deletes")
	}
	if s.Guard.InputsHash != "" {
		args = append(args, "--inputs-hash="+s.Guard.InputsHash)
	}
	if s.Guard.AllowDeletesHash != "" {
		args = append(args, "--allow-deletes-hash="+s.Guard.AllowDeletesHash)
	}
	if s.Guard.ExpectPlan != "" {
		args = append(args, "--expect-plan="+s.Guard.ExpectPlan)
	}
	if s.Op == infrav1.OperationRestore && s.Restore != nil {
		args = append(args,
			"--restore-chunks="+strconv.Itoa(len(s.Restore.Chunks)),
			"--restore-resources="+strconv.Itoa(s.Restore.Resources))
	}
	if s.PlanKeySecret != "" {
		args = append(args, "--plan-key-file="+PlanKeyFile)
	}
	// The values of spec.jobs.env (a secretKeyRef's too) are redacted from
	// what the runner reports; only the names are on the command line.
	for _, e := range sourceEnv(s)[len(jobOwnedEnv(s)):] {
		args = append(args, "--redact-env="+e.Name)
	}
	if s.RunnerEvents {
		args = append(args,
			"--event-object="+strings.Join([]string{infrav1.GroupVersion.String(), s.Kind, s.Namespace, s.ObjectName, string(s.UID)}, "/"),
			"--job-name="+s.Name)
	}
	return args
}

// sourceEnv is the module container's environment: the variables the
// Job owns, then the policy's without the names the runner owns (TF_*,
// KUBE_*), which are left out silently.
func sourceEnv(s Spec) []corev1.EnvVar {
	out := jobOwnedEnv(s)
	for _, e := range s.Policy.Env {
		if strings.HasPrefix(e.Name, "TF_") || strings.HasPrefix(e.Name, "KUBE_") {
			continue
		}
		out = append(out, *e.DeepCopy())
	}
	return out
}

// jobOwnedEnv are the variables the Job owns, first in sourceEnv.
func jobOwnedEnv(s Spec) []corev1.EnvVar {
	return []corev1.EnvVar{
		{Name: "TF_IN_AUTOMATION", Value: "1"},
		{Name: "TF_INPUT", Value: "0"},
		{Name: "HOME", Value: WorkDir},
		{Name: "TMPDIR", Value: TmpDir},
		{Name: "KUBE_NAMESPACE", Value: s.JobNamespace()},
		{Name: "CHECKPOINT_DISABLE", Value: "1"},
	}
}

func emptyDir(name string) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}
}

// volumes are the pod's volumes before credentials and plan key.
func volumes(s Spec) []corev1.Volume {
	return []corev1.Volume{emptyDir(RunnerVolume), emptyDir(WorkVolume), emptyDir(TmpVolume), configVolume(s)}
}

// configVolume is the per-run Secret; for a restore, a projection of it
// and of each backup chunk's tfstate key at restore/<index>.
func configVolume(s Spec) corev1.Volume {
	perRun := PerRunSecretName(s.Name)
	if s.Op != infrav1.OperationRestore || s.Restore == nil {
		return corev1.Volume{Name: ConfigVolume, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: perRun, DefaultMode: ptr.To(secretFileMode),
		}}}
	}
	sources := []corev1.VolumeProjection{{Secret: &corev1.SecretProjection{
		LocalObjectReference: corev1.LocalObjectReference{Name: perRun},
	}}}
	for i, chunk := range s.Restore.Chunks {
		sources = append(sources, corev1.VolumeProjection{Secret: &corev1.SecretProjection{
			LocalObjectReference: corev1.LocalObjectReference{Name: chunk},
			Items:                []corev1.KeyToPath{{Key: state.DataKey, Path: RestoreSubdir + "/" + strconv.Itoa(i)}},
		}})
	}
	return corev1.Volume{Name: ConfigVolume, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		Sources: sources, DefaultMode: ptr.To(secretFileMode),
	}}}
}

// addPlanKey mounts the plan key Secret, when given, read-only at
// /captf/plan-key.
func addPlanKey(pod *corev1.PodSpec, secret string) {
	if secret == "" {
		return
	}
	pod.Volumes = append(pod.Volumes, corev1.Volume{Name: PlanKeyVolume, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
		SecretName: secret, DefaultMode: ptr.To(secretFileMode),
	}}})
	for i := range pod.Containers {
		if pod.Containers[i].Name == SourceContainer {
			pod.Containers[i].VolumeMounts = append(pod.Containers[i].VolumeMounts,
				corev1.VolumeMount{Name: PlanKeyVolume, MountPath: PlanKeyDir, ReadOnly: true})
		}
	}
}
