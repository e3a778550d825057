package e2e

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/devenv"
	"captf.io/captf/pkg/state"
)

// restoreHint is how a failed apply's summary says which backup to restore.
var restoreHint = regexp.MustCompile(regexp.QuoteMeta(infrav1.RestoreStateAnnotation) + `=(\d+)`)

// The OpenTofu oversize state rescue, then the size-limits runbook: a
// TerraformCluster whose state grows over 1 MiB compressed on OpenTofu,
// whose kubernetes backend cannot store it. The apply fails, the runner
// saves the state it could not store as a backup set, and the failure
// summary says which serial to restore. The user does what the runbook
// says: moves the object to a Terraform image and annotates it with
// captf.io/restore-state=<serial>. The restore Job pushes the saved state
// with Terraform, which splits it across Secrets, and the object ends
// provisioned with the infrastructure OpenTofu created (same endpoint,
// same blob), not a new one.
func oversizeState(t *testing.T, ctx context.Context, f *flow) {
	objs := pick(f.quickstart("tofu"), f.base()...)
	for _, o := range objs {
		if o.GetKind() == "TerraformCluster" {
			f.set(o, devenv.ExampleImage("large-cluster", "tofu"), "spec", "source", "image")
		}
	}
	f.create(ctx, objs)

	var tc infrav1.TerraformCluster
	serial := int64(0)
	f.waitFor(ctx, "the OpenTofu apply failed and its summary names the backup to restore", jobWait, func(ctx context.Context) (bool, string, error) {
		if _, err := f.get(ctx, "quickstart", &tc); err != nil {
			return false, "", err
		}
		lr := tc.Status.LastRun
		if lr == nil || lr.Error == nil {
			return false, ready(tc.Status.Conditions), nil
		}
		m := restoreHint.FindStringSubmatch(lr.Error.Summary)
		if m == nil {
			return false, "last run failed without naming a backup: " + lr.Error.Summary, nil
		}
		serial, _ = strconv.ParseInt(m[1], 10, 64)
		return true, "", nil
	})
	if c := meta.FindStatusCondition(tc.Status.Conditions, infrav1.ApplyJobSucceededCondition); c == nil || c.Status != "False" {
		t.Errorf("ApplyJobSucceeded is %+v, want False after the rejected state", c)
	}
	suffix := f.suffix("TerraformCluster", "quickstart")
	saved := f.rescuedState(ctx, suffix, serial)
	t.Logf("OpenTofu's rejected state (serial %d, %d bytes compressed) was saved as %s", serial, saved.compressed, saved.set)
	// What is stored meanwhile: OpenTofu keeps at most the one Secret it
	// could write before the apply (it cannot hold the saved state).
	if st, _, err := f.readState(ctx, "TerraformCluster", "quickstart"); err == nil {
		t.Logf("the stored state meanwhile: serial %d, %d resources in %d Secret(s)", st.Serial, st.ManagedResources, len(st.Secrets))
		if st.ManagedResources != 0 {
			t.Errorf("OpenTofu stored a state with %d resources although the backend rejected the state", st.ManagedResources)
		}
	}
	if saved.compressed <= state.ChunkSize {
		t.Errorf("the saved state is %d bytes compressed: not over the 1 MiB a Secret holds", saved.compressed)
	}

	// The runbook: a Terraform image, then the restore annotation (one
	// patch, so that no apply can start in between).
	patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}},"spec":{"source":{"image":%q}}}`,
		infrav1.RestoreStateAnnotation, strconv.FormatInt(serial, 10), devenv.ExampleImage("large-cluster", "terraform"))
	if err := f.env.Client.Patch(ctx, &tc, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
	f.waitFor(ctx, "the state is restored and the cluster provisioned on Terraform", 5*time.Minute, func(ctx context.Context) (bool, string, error) {
		if _, err := f.get(ctx, "quickstart", &tc); err != nil {
			return false, "", err
		}
		restore := meta.FindStatusCondition(tc.Status.Conditions, infrav1.RestoreJobSucceededCondition)
		if restore == nil || restore.Status != "True" {
			return false, fmt.Sprintf("RestoreJobSucceeded %+v", restore), nil
		}
		return provisionedReady(tc.Status.WorkspaceStatus), ready(tc.Status.Conditions), nil
	})
	if tc.Status.LastRestoredSerial != serial || tc.Annotations[infrav1.RestoreStateAnnotation] != "" {
		t.Errorf("lastRestoredSerial %d (want %d), annotation %q left", tc.Status.LastRestoredSerial, serial, tc.Annotations[infrav1.RestoreStateAnnotation])
	}
	version := f.runtimeVersion("terraform")
	restored := false
	for _, r := range f.runs("TerraformCluster", "quickstart", string(infrav1.OperationRestore)) {
		restored = restored || (r.ExitCode == 0 && r.Result.Runtime.Version == version)
	}
	if !restored {
		t.Errorf("no restore Job succeeded with Terraform %s", version)
	}
	// The infrastructure is the one OpenTofu created, now in a state
	// Terraform stores across several Secrets.
	if tc.Spec.ControlPlaneEndpoint.Host != saved.host {
		t.Errorf("endpoint %q, want the one of the rescued state (%q): the apply created a new cluster", tc.Spec.ControlPlaneEndpoint.Host, saved.host)
	}
	var exports struct {
		Blob string `json:"blob_fingerprint"`
	}
	if tc.Status.Exports == nil || json.Unmarshal(tc.Status.Exports.Raw, &exports) != nil || exports.Blob != saved.blob {
		t.Error("the exports do not show the blob of the rescued state: the blob was created again")
	}
	st, _, err := f.readState(ctx, "TerraformCluster", "quickstart")
	if err != nil {
		t.Fatalf("reading the restored state: %v", err)
	}
	if st.Lineage != saved.lineage || len(st.Secrets) < 2 || st.TerraformVersion != version {
		t.Errorf("the state now: lineage %s (rescued %s), %d Secrets, written by %s; want the rescued lineage split by Terraform %s",
			st.Lineage, saved.lineage, len(st.Secrets), st.TerraformVersion, version)
	}
	// Back to OpenTofu now would read the split state truncated: admission
	// refuses it, naming the state's size and the way forward.
	back := fmt.Appendf(nil, `{"spec":{"source":{"image":%q}}}`, devenv.ExampleImage("large-cluster", "tofu"))
	err = f.env.Client.Patch(ctx, tc.DeepCopy(), client.RawPatch(types.MergePatchType, back))
	if err == nil || !strings.Contains(err.Error(), "runs OpenTofu") || !strings.Contains(err.Error(), "MiB compressed") || !strings.Contains(err.Error(), "spec.source.image") {
		t.Errorf("moving the split state back to an OpenTofu image: %v; want admission to refuse it, naming the state size", err)
	}
	// Like every backup set, the saved one belongs to the object (and goes
	// with it): by now the restore has used it.
	for _, s := range f.secretsMatching(ctx, map[string]string{infrav1.StateBackupLabel: "true", infrav1.StateBackupSuffixLabel: suffix}) {
		if s.Annotations[infrav1.StateBackupSetAnnotation] == saved.set && !ownedBy(s.OwnerReferences, tc.UID) {
			t.Errorf("backup Secret %s (saved from errored.tfstate) has no owner reference to the TerraformCluster: it outlives the object", s.Name)
		}
	}

	// The state shrinks back into one Secret: Terraform deletes the pieces
	// it no longer needs, which the state protection still holds; the
	// manager lets them go, or the next Job (here the destroy) would read
	// them as part of the state.
	patch = []byte(`{"spec":{"variables":{"blobs":0}}}`)
	if err := f.env.Client.Patch(ctx, &tc, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
	f.waitFor(ctx, "the apply deleting the blobs waits for approval", 3*time.Minute, func(ctx context.Context) (bool, string, error) {
		if _, err := f.get(ctx, "quickstart", &tc); err != nil {
			return false, "", err
		}
		c := conditionOf(tc.Status.Conditions, infrav1.ApplyJobSucceededCondition)
		return c != nil && c.Reason == infrav1.DestructivePlanBlockedReason && tc.Status.PendingPlanRef != nil, ready(tc.Status.Conditions), nil
	})
	f.approve(ctx, "tfc/quickstart")
	f.waitFor(ctx, "the shrunk state is applied and held in one Secret", jobWait, func(ctx context.Context) (bool, string, error) {
		if _, err := f.get(ctx, "quickstart", &tc); err != nil {
			return false, "", err
		}
		var list corev1.SecretList
		if err := f.env.Client.List(ctx, &list, client.InNamespace(f.ns), client.MatchingLabelsSelector{Selector: state.Selector(suffix)}); err != nil {
			return false, "", err
		}
		applied := meta.IsStatusConditionTrue(tc.Status.Conditions, infrav1.InputsAppliedCondition)
		return applied && len(list.Items) == 1, fmt.Sprintf("InputsApplied %v, %d state Secrets", applied, len(list.Items)), nil
	})
	f.teardown(ctx, objs, "terraform")
}

func ownedBy(refs []metav1.OwnerReference, uid types.UID) bool {
	for _, r := range refs {
		if r.UID == uid {
			return true
		}
	}
	return false
}

// rescued is what the runner saved of a state the backend rejected.
type rescued struct {
	set        string
	compressed int
	lineage    string
	host, blob string
}

// rescuedState reads the backup set of serial saved from errored.tfstate
// and decodes what the test compares (never logging values).
func (f *flow) rescuedState(ctx context.Context, suffix string, serial int64) rescued {
	f.t.Helper()
	var pieces []corev1.Secret
	for _, s := range f.secretsMatching(ctx, map[string]string{infrav1.StateBackupLabel: "true", infrav1.StateBackupSuffixLabel: suffix}) {
		if s.Annotations[infrav1.StateBackupOriginAnnotation] == "errored-state" && s.Annotations[infrav1.StateBackupSerialAnnotation] == strconv.FormatInt(serial, 10) {
			pieces = append(pieces, s)
		}
	}
	if len(pieces) == 0 {
		f.t.Fatalf("no backup saved from errored.tfstate has serial %d", serial)
	}
	sort.Slice(pieces, func(i, j int) bool {
		a, _ := strconv.Atoi(pieces[i].Annotations[infrav1.StateBackupChunkAnnotation])
		b, _ := strconv.Atoi(pieces[j].Annotations[infrav1.StateBackupChunkAnnotation])
		return a < b
	})
	out := rescued{set: pieces[0].Annotations[infrav1.StateBackupSetAnnotation]}
	var gz bytes.Buffer
	for _, p := range pieces {
		if p.Annotations[infrav1.StateBackupSetAnnotation] != out.set {
			f.t.Fatalf("two backups saved from errored.tfstate have serial %d: %s and %s", serial, out.set, p.Annotations[infrav1.StateBackupSetAnnotation])
		}
		gz.Write(p.Data[state.DataKey])
	}
	out.compressed = gz.Len()
	zr, err := gzip.NewReader(&gz)
	if err != nil {
		f.t.Fatalf("the saved state is not gzip: %v", err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		f.t.Fatalf("the saved state does not gunzip: %v", err)
	}
	var doc struct {
		Lineage string `json:"lineage"`
		Outputs struct {
			Endpoint struct {
				Value struct {
					Host string `json:"host"`
				} `json:"value"`
			} `json:"control_plane_endpoint"`
			Exports struct {
				Value struct {
					Blob string `json:"blob_fingerprint"`
				} `json:"value"`
			} `json:"exports"`
		} `json:"outputs"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		f.t.Fatalf("the saved state is not JSON: %v", err)
	}
	out.lineage, out.host, out.blob = doc.Lineage, doc.Outputs.Endpoint.Value.Host, doc.Outputs.Exports.Value.Blob
	if out.host == "" || out.blob == "" {
		f.t.Fatal("the saved state has no endpoint or blob output")
	}
	return out
}
