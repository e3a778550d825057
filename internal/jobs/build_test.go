package jobs

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/pkg/state"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func TestBuildGolden(t *testing.T) {
	for _, tc := range buildCases() {
		t.Run(tc.name, func(t *testing.T) {
			job, secret := mustBuild(t, tc.spec)
			var got bytes.Buffer
			for _, obj := range []any{job, secret} {
				out, err := yaml.Marshal(obj)
				if err != nil {
					t.Fatal(err)
				}
				got.WriteString("---\n")
				got.Write(out)
			}
			path := filepath.Join("testdata", tc.name+".yaml")
			if *update {
				if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Fatalf("%s differs from the built objects (run with -update after checking the change):\n%s", path, got.String())
			}
		})
	}
}

func TestBuildRejects(t *testing.T) {
	valid := newSpec("TerraformMachine", "m1", infrav1.OperationApply, 1, nil, "")
	testCases := []struct {
		name   string
		change func(s *Spec)
		want   string
	}{
		{name: "empty image", change: func(s *Spec) { s.Image = " " }, want: "the module image is empty"},
		{name: "empty runner image", change: func(s *Spec) { s.RunnerImage = "" }, want: "the runner image is empty"},
		{name: "unknown op", change: func(s *Spec) { s.Op = "import" }, want: `operation "import" is unknown`},
		{name: "attempt 0", change: func(s *Spec) { s.Attempt = 0 }, want: "attempt 0 is below 1"},
		{name: "unknown kind", change: func(s *Spec) { s.Kind = "Machine" }, want: `kind "Machine" is not a workload kind`},
		{name: "no UID", change: func(s *Spec) { s.UID = "" }, want: "needs a name, a namespace and a UID"},
		{name: "no cluster", change: func(s *Spec) { s.ClusterName = "" }, want: "the cluster name is empty"},
		{name: "name too long", change: func(s *Spec) { s.Name = "captf-m-" + strings.Repeat("x", 50) }, want: "more than 57"},
		{name: "name not a label", change: func(s *Spec) { s.Name = "captf-m-a.b-apply-a1-abcdef" }, want: "is not a DNS label"},
		{name: "empty name", change: func(s *Spec) { s.Name = "" }, want: "the Job name is empty"},
		{name: "bad pull policy", change: func(s *Spec) { s.PullPolicy = "Sometimes" }, want: `image pull policy "Sometimes"`},
		{name: "unresolved policy", change: func(s *Spec) { s.Policy = Policy{} }, want: "build it with MergePolicy"},
		{name: "restore without chunks", change: func(s *Spec) { s.Op = infrav1.OperationRestore }, want: "needs the backup's chunk Secrets"},
		{name: "restore with empty chunk list", change: func(s *Spec) { s.Op, s.Restore = infrav1.OperationRestore, &Restore{} },
			want: "needs the backup's chunk Secrets"},
		{name: "chunks on an apply", change: func(s *Spec) { s.Restore = &Restore{Chunks: []string{"b"}} }, want: "restore Jobs only"},
		{name: "guard on a destroy", change: func(s *Spec) { s.Op, s.Guard.Deletes = infrav1.OperationDestroy, true }, want: "apply Jobs only"},
		{name: "an approved plan on a refresh", change: func(s *Spec) {
			s.Op, s.InputsHash, s.Marks.ApprovedPlan = infrav1.OperationRefresh, "", &ApprovedPlan{Name: "tfp", PlanHash: "p2:x"}
		}, want: "marks apply to apply Jobs only"},
		{name: "an interrupted apply's mark on a destroy", change: func(s *Spec) {
			s.Op, s.InputsHash, s.Marks.AfterInterruptedApply = infrav1.OperationDestroy, "", "captf-m-m1-apply-a1-0a0b0c"
		}, want: "marks apply to apply Jobs only"},
		{name: "plan without key", change: func(s *Spec) { s.Op = infrav1.OperationPlan }, want: "needs the plan key Secret"},
		{name: "guarded apply without key", change: func(s *Spec) { s.Guard.Deletes = true }, want: "needs the plan key Secret"},
		{name: "plan key on a drift", change: func(s *Spec) { s.Op, s.PlanKeySecret = infrav1.OperationDrift, "k" }, want: "not on this drift Job"},
		{name: "apply without inputs hash", change: func(s *Spec) { s.InputsHash = "" }, want: "needs the inputs hash"},
		{name: "an apply elsewhere", change: func(s *Spec) { s.RunNamespace, s.Unowned = "captf-evac-x", true }, want: "only an unowned destroy runs outside"},
		{name: "an owned destroy elsewhere", change: func(s *Spec) { s.Op, s.InputsHash, s.RunNamespace = infrav1.OperationDestroy, "", "captf-evac-x" },
			want: "only an unowned destroy runs outside"},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			s := valid
			tc.change(&s)
			job, secret, err := Build(s)
			if err == nil {
				t.Fatal("Build accepted the spec")
			}
			if job != nil || secret != nil {
				t.Error("Build returned objects with an error")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q does not name %q", err, tc.want)
			}
		})
	}
	if _, _, err := Build(valid); err != nil {
		t.Fatalf("the base spec is invalid: %v", err)
	}
}

func TestOwnPerRunSecret(t *testing.T) {
	job, secret := mustBuild(t, buildCases()[0].spec)
	if err := OwnPerRunSecret(secret, job); err == nil {
		t.Fatal("a Job without UID was accepted as owner")
	}
	job.UID = "0d9c8b7a-6f5e-4d3c-2b1a-098765432100"
	if err := OwnPerRunSecret(secret, job); err != nil {
		t.Fatal(err)
	}
	refs := secret.OwnerReferences
	if len(refs) != 1 || refs[0].Kind != "Job" || refs[0].APIVersion != "batch/v1" || refs[0].Name != job.Name || refs[0].UID != job.UID {
		t.Fatalf("owner references %+v", refs)
	}
	other := &batchv1.Job{}
	other.Name, other.Namespace, other.UID = "captf-m-other-apply-a1-abcdef", job.Namespace, "u"
	if err := OwnPerRunSecret(secret, other); err == nil {
		t.Fatal("another Job was accepted as owner")
	}
}

func mustBuild(t *testing.T, s Spec) (*batchv1.Job, *corev1.Secret) {
	t.Helper()
	job, secret, err := Build(s)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	return job, secret
}

// A Job of an object being deleted has no owner reference (the garbage
// collector would stop it under foreground deletion); its annotations
// still name the object.
func TestBuildUnowned(t *testing.T) {
	spec := buildCases()[0].spec
	owned, _ := mustBuild(t, spec)
	spec.Unowned = true
	unowned, _ := mustBuild(t, spec)
	if len(owned.OwnerReferences) != 1 || len(unowned.OwnerReferences) != 0 {
		t.Fatalf("owner references: owned %+v, unowned %+v", owned.OwnerReferences, unowned.OwnerReferences)
	}
	if owned.Spec.TTLSecondsAfterFinished != nil || unowned.Spec.TTLSecondsAfterFinished == nil || *unowned.Spec.TTLSecondsAfterFinished != UnownedJobTTLSeconds {
		t.Errorf("ttlSecondsAfterFinished: owned %v, unowned %v; want only the unowned Job to expire, after %d s",
			owned.Spec.TTLSecondsAfterFinished, unowned.Spec.TTLSecondsAfterFinished, UnownedJobTTLSeconds)
	}
	for _, j := range []*batchv1.Job{owned, unowned} {
		if j.Annotations[infrav1.OwnerUIDAnnotation] != string(spec.UID) || j.Annotations[infrav1.OwnerAnnotation] != spec.ObjectName {
			t.Errorf("annotations %v, want the object's UID %s and name %s", j.Annotations, spec.UID, spec.ObjectName)
		}
	}
}

// An evacuated destroy runs, with its per-run Secret and its state, in
// the run namespace, still naming its object, and posts no events.
func TestBuildRunNamespace(t *testing.T) {
	spec := newSpec("TerraformMachine", "m1", infrav1.OperationDestroy, 1, nil, "")
	spec.Unowned, spec.RunNamespace, spec.RunnerEvents = true, "captf-evac-1", true
	job, secret := mustBuild(t, spec)
	if job.Namespace != spec.RunNamespace || secret.Namespace != spec.RunNamespace {
		t.Errorf("Job in %q, per-run Secret in %q; want both in %q", job.Namespace, secret.Namespace, spec.RunNamespace)
	}
	if job.Labels[infrav1.OwnerNamespaceLabel] != spec.Namespace || job.Spec.Template.Labels[infrav1.OwnerNamespaceLabel] != spec.Namespace || job.Annotations[infrav1.OwnerAnnotation] != spec.ObjectName {
		t.Errorf("labels %v do not name the object %s/%s", job.Labels, spec.Namespace, spec.ObjectName)
	}
	args := strings.Join(job.Spec.Template.Spec.Containers[0].Args, " ")
	suffix, _ := state.Suffix(spec.Namespace, spec.Kind, spec.ObjectName)
	for _, want := range []string{"--backend-config=namespace=captf-evac-1", "--backend-config=secret_suffix=" + suffix} {
		if !strings.Contains(args, want) {
			t.Errorf("arguments %q lack %q", args, want)
		}
	}
	if strings.Contains(args, "--event-object") {
		t.Errorf("an evacuated run posts events into the object's namespace: %q", args)
	}
	owned, _ := mustBuild(t, newSpec("TerraformMachine", "m1", infrav1.OperationDestroy, 1, nil, ""))
	if _, ok := owned.Labels[infrav1.OwnerNamespaceLabel]; ok {
		t.Errorf("a Job in its object's namespace names it: %v", owned.Annotations)
	}
}
