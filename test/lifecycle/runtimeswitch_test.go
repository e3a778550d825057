package lifecycle_test

import (
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/imagemeta"
	"captf.io/captf/internal/test/registrytest"
	"captf.io/captf/pkg/state"
)

// An object that reaches the manager with an OpenTofu image over a state
// Terraform split across Secrets (admission checks only a change of
// image; here the object is created over the state, as a move or an
// adoption does) is held before any Job: OpenTofu would read the state
// truncated. The image's runtime is read from a real registry. Back on a
// Terraform image, the apply starts.
func TestOpenTofuImageOverASplitStateIsHeld(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "tofu")
	host := registrytest.Start(t)
	tofu := registrytest.Push(t, host+"/captf/noop-cluster:tofu", map[string]string{imagemeta.LabelRuntime: imagemeta.RuntimeTofu})
	terraform := registrytest.Push(t, host+"/captf/noop-cluster:terraform", map[string]string{imagemeta.LabelRuntime: imagemeta.RuntimeTerraform})

	pieces := w.splitState(state.KindCluster, w.cluster)
	tc := w.newCluster(func(tc *infrav1.TerraformCluster) { tc.Spec.Source.Image = tofu })
	var held *metav1.Condition
	w.eventually(time.Minute, "the apply is held: OpenTofu cannot keep the state", func() (bool, error) {
		w.get(tc)
		held = conditionOf(tc, infrav1.ApplyJobSucceededCondition)
		return held != nil && held.Reason == infrav1.RuntimeCannotKeepStateReason, nil
	})
	for _, want := range []string{tofu, "runs OpenTofu", fmt.Sprintf("split by Terraform across %d Secrets", pieces), "size-limits runbook"} {
		if !strings.Contains(held.Message, want) {
			t.Errorf("the condition's message %q does not name %q", held.Message, want)
		}
	}
	if jobs := w.jobsOf("TerraformCluster", w.cluster, "apply"); len(jobs) > 0 {
		t.Errorf("an apply Job started on the split state with the OpenTofu image: %s", jobs[0].Name)
	}
	w.update(tc, func(o client.Object) { o.(*infrav1.TerraformCluster).Spec.Source.Image = terraform })
	w.eventually(time.Minute, "the apply starts on the Terraform image", func() (bool, error) {
		return len(w.jobsOf("TerraformCluster", w.cluster, "apply")) > 0, nil
	})
}

// splitState writes, before the object exists, a state of one resource
// whose compressed size needs two Secrets, laid out as Terraform splits
// it, and returns the number of pieces.
func (w *world) splitState(kind, objName string) int {
	w.t.Helper()
	blob := make([]byte, state.ChunkSize+state.ChunkSize/4)
	if _, err := rand.Read(blob); err != nil {
		w.t.Fatal(err)
	}
	doc, err := json.Marshal(map[string]any{
		"version": 4, "terraform_version": "1.8.5", "serial": 3, "lineage": "5f0b6a52-2a50-4a8e-9d0e-6b1f9c2d7e11", "outputs": map[string]any{},
		"resources": []any{map[string]any{"mode": "managed", "type": "terraform_data", "name": "blob",
			"provider":  `provider["terraform.io/builtin/terraform"]`,
			"instances": []any{map[string]any{"attributes": map[string]any{"id": "blob", "input": base64.StdEncoding.EncodeToString(blob)}}}}},
	})
	if err != nil {
		w.t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	if _, err := zw.Write(doc); err != nil {
		w.t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		w.t.Fatal(err)
	}
	suffix, err := state.Suffix(w.ns, kind, objName)
	if err != nil {
		w.t.Fatal(err)
	}
	labels := state.OwnerLabels(kind, objName, w.cluster)
	data := gz.Bytes()
	n := 0
	for start := 0; start < len(data); start += state.ChunkSize {
		end := min(start+state.ChunkSize, len(data))
		secret := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: state.ChunkName(suffix, n), Labels: map[string]string{}},
			Data:       map[string][]byte{state.DataKey: data[start:end]},
		}
		for k, v := range labels {
			secret.Labels[k] = v
		}
		secret.Labels[state.LabelState], secret.Labels[state.LabelSecretSuffix], secret.Labels[state.LabelWorkspace] = "true", suffix, state.Workspace
		w.create(secret)
		n++
	}
	return n
}
