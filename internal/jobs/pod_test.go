package jobs

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/runner"
	"captf.io/captf/pkg/state"
)

// TestArgsParseWithRunner feeds the args of every built Job to the
// runner's own flag parser, so that the two sides cannot drift apart.
func TestArgsParseWithRunner(t *testing.T) {
	for _, tc := range buildCases() {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.spec
			job, _ := mustBuild(t, s)
			c := job.Spec.Template.Spec.Containers[0]
			var stderr bytes.Buffer
			o, err := runner.ParseRunFlags(c.Args, &stderr)
			if err != nil {
				t.Fatalf("the runner rejects the Job's args: %v\n%s", err, stderr.String())
			}
			suffix, err := state.Suffix(s.Namespace, s.Kind, s.ObjectName)
			if err != nil {
				t.Fatal(err)
			}
			want := runner.Options{
				Op:          string(s.Op),
				Bin:         []string{runner.DefaultBin},
				Config:      runner.DefaultConfig,
				Module:      runner.DefaultModule,
				Providers:   runner.DefaultProviders,
				Workdir:     runner.DefaultWorkdir,
				Image:       s.Image,
				Result:      runner.DefaultResult,
				LockTimeout: time.Duration(s.Policy.LockTimeoutSeconds) * time.Second,
				StopTimeout: 570 * time.Second,
				BackendConfig: []string{
					"secret_suffix=" + suffix,
					"namespace=" + s.Namespace,
					"in_cluster_config=true",
					"labels=" + state.HCLMap(state.OwnerLabels(s.Kind, s.ObjectName, s.ClusterName)),
				},
				ForceUnlock:      s.ForceUnlock,
				GuardDeletes:     s.Guard.Deletes,
				InputsHash:       s.Guard.InputsHash,
				AllowDeletesHash: s.Guard.AllowDeletesHash,
				ExpectPlan:       s.Guard.ExpectPlan,
				PlanKeyFile:      runner.DefaultPlanKeyFile,
				Credentials:      runner.DefaultCredentials,
			}
			if s.Restore != nil {
				want.RestoreChunks, want.RestoreResources = len(s.Restore.Chunks), s.Restore.Resources
			}
			if s.RunnerEvents {
				want.EventObject = fmt.Sprintf("infrastructure.cluster.x-k8s.io/v1alpha1/%s/%s/%s/%s", s.Kind, s.Namespace, s.ObjectName, s.UID)
				want.JobName = s.Name
			}
			// spec.jobs.env names (a secretKeyRef's too, never the runner's
			// own TF_ and KUBE_ ones) are redacted; their values are never
			// on the command line.
			for _, e := range s.Policy.Env {
				if !strings.HasPrefix(e.Name, "TF_") && !strings.HasPrefix(e.Name, "KUBE_") {
					want.RedactEnv = append(want.RedactEnv, e.Name)
				}
				if e.Value != "" && slices.ContainsFunc(c.Args, func(a string) bool { return strings.Contains(a, e.Value) }) {
					t.Errorf("the value of %s is on the command line", e.Name)
				}
			}
			expect(t, "parsed options", o, want)
			if tc.name == "apply-unguarded" {
				expect(t, "tuned lock timeout", o.LockTimeout, 120*time.Second)
			} else {
				expect(t, "default lock timeout", o.LockTimeout, 300*time.Second)
			}
			// The plan key flag is passed exactly when the key is mounted.
			expect(t, "--plan-key-file passed", hasArg(c.Args, "--plan-key-file="), s.PlanKeySecret != "")
			expect(t, "plan-key mounted", hasMount(c, PlanKeyVolume), s.PlanKeySecret != "")
		})
	}
}

// TestPodShape checks what the API server's validation would, and a few
// rules it would not: unique names, mounts naming volumes, Secret modes.
func TestPodShape(t *testing.T) {
	for _, tc := range buildCases() {
		t.Run(tc.name, func(t *testing.T) {
			job, secret := mustBuild(t, tc.spec)
			pod := job.Spec.Template.Spec
			volumes := map[string]corev1.Volume{}
			for _, v := range pod.Volumes {
				if _, dup := volumes[v.Name]; dup {
					t.Errorf("volume %q twice", v.Name)
				}
				volumes[v.Name] = v
				if v.Secret != nil && (v.Secret.DefaultMode == nil || *v.Secret.DefaultMode != 0o440) {
					t.Errorf("Secret volume %q has mode %v, want 0440", v.Name, v.Secret.DefaultMode)
				}
				if v.Projected != nil && (v.Projected.DefaultMode == nil || *v.Projected.DefaultMode != 0o440) {
					t.Errorf("projected volume %q has mode %v, want 0440", v.Name, v.Projected.DefaultMode)
				}
			}
			containers := map[string]bool{}
			for _, c := range append(append([]corev1.Container{}, pod.InitContainers...), pod.Containers...) {
				if containers[c.Name] {
					t.Errorf("container %q twice", c.Name)
				}
				containers[c.Name] = true
				paths := map[string]bool{}
				for _, m := range c.VolumeMounts {
					if _, ok := volumes[m.Name]; !ok {
						t.Errorf("container %q mounts %q, which is no volume", c.Name, m.Name)
					}
					if paths[m.MountPath] {
						t.Errorf("container %q mounts %s twice", c.Name, m.MountPath)
					}
					paths[m.MountPath] = true
				}
				if sc := c.SecurityContext; sc == nil || sc.Capabilities == nil || len(sc.Capabilities.Add) > 0 ||
					len(sc.Capabilities.Drop) != 1 || sc.Capabilities.Drop[0] != "ALL" {
					t.Errorf("container %q does not drop exactly ALL capabilities", c.Name)
				}
			}
			init := pod.InitContainers[0]
			if len(init.VolumeMounts) != 1 || init.VolumeMounts[0].Name != RunnerVolume || init.VolumeMounts[0].ReadOnly {
				t.Errorf("init container mounts %+v, want only runner read-write", init.VolumeMounts)
			}
			for _, m := range pod.Containers[0].VolumeMounts {
				want := m.Name == WorkVolume || m.Name == TmpVolume
				if m.ReadOnly == want {
					t.Errorf("source mounts %s read-only=%v", m.Name, m.ReadOnly)
				}
			}
			for _, e := range pod.Containers[0].Env[6:] {
				if strings.HasPrefix(e.Name, "TF_") || strings.HasPrefix(e.Name, "KUBE_") {
					t.Errorf("policy env %s reached the Job", e.Name)
				}
			}
			for _, labels := range []map[string]string{job.Labels, job.Spec.Template.Labels} {
				for k, v := range labels {
					if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
						t.Errorf("label %s=%q: %v", k, v, errs)
					}
				}
			}
			expect(t, "per-run Secret name", secret.Name, "captf-run-"+job.Name)
			expect(t, "config volume names the per-run Secret", configSecret(volumes[ConfigVolume]), secret.Name)
		})
	}
}

func TestLongNamesAreHashedInLabels(t *testing.T) {
	long := strings.Repeat("machine-", 10) + "x"
	s := newSpec(state.KindMachine, long, infrav1.OperationApply, 1, nil, "")
	s.ClusterName = strings.Repeat("cluster-", 9)
	job, _ := mustBuild(t, s)
	hex16 := regexp.MustCompile(`^[0-9a-f]{16}$`)
	for _, key := range []string{infrav1.OwnerNameLabel, infrav1.ClusterNameLabel} {
		if v := job.Labels[key]; !hex16.MatchString(v) {
			t.Errorf("label %s = %q, want 16 hex characters", key, v)
		}
	}
	if job.Labels[infrav1.OwnerNameLabel] != shortHash(long) {
		t.Errorf("owner-name label %q is not the hash of the name", job.Labels[infrav1.OwnerNameLabel])
	}
}

func configSecret(v corev1.Volume) string {
	switch {
	case v.Secret != nil:
		return v.Secret.SecretName
	case v.Projected != nil && len(v.Projected.Sources) > 0 && v.Projected.Sources[0].Secret != nil:
		return v.Projected.Sources[0].Secret.Name
	}
	return ""
}

func hasArg(args []string, prefix string) bool {
	for _, a := range args {
		if strings.HasPrefix(a, prefix) {
			return true
		}
	}
	return false
}

func hasMount(c corev1.Container, volume string) bool {
	for _, m := range c.VolumeMounts {
		if m.Name == volume {
			return true
		}
	}
	return false
}
