package workspace

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/custody"
	"captf.io/captf/internal/roles"
	"captf.io/captf/pkg/state"
)

func stateSecret(t testing.TB, suffix string, serial int, rv string) corev1.Secret {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	fmt.Fprintf(zw, `{"version":4,"serial":%d,"lineage":"l","terraform_version":"1.12.6","outputs":{},"resources":[]}`, serial)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: state.SecretName(suffix), ResourceVersion: rv, Labels: map[string]string{state.LabelState: "true"}},
		Data:       map[string][]byte{state.DataKey: buf.Bytes()},
	}
}

// TestDecodeSkipsUnchangedState: a pass whose state Secrets did not change
// decompresses nothing.
func TestDecodeSkipsUnchangedState(t *testing.T) {
	e := &Engine{}
	suffix := "0123456789abcdef-c"
	secrets := []corev1.Secret{stateSecret(t, suffix, 1, "10")}
	for range 5 {
		st, err := e.states.Decode("uid-1", suffix, secrets, true)
		if err != nil || st.Serial != 1 {
			t.Fatalf("decode = %v, %v", st, err)
		}
	}
	if n := e.Decodes(); n != 1 {
		t.Errorf("%d decompressions for 5 passes over an unchanged state, want 1", n)
	}
	changed := []corev1.Secret{stateSecret(t, suffix, 2, "11")}
	if st, _ := e.states.Decode("uid-1", suffix, changed, true); st.Serial != 2 || e.Decodes() != 2 {
		t.Errorf("a changed state read serial %d after %d decompressions, want serial 2 after 2", st.Serial, e.Decodes())
	}
	if _, _ = e.states.Decode("uid-2", suffix, changed, true); e.Decodes() != 3 {
		t.Error("another object reused the first one's state")
	}
}

// BenchmarkObserveUnchangedState times the state step of a pass over an
// unchanged state and, in every iteration, the decompression it avoids
// (the baseline); it reports their ratio (the target is far below 1) and
// the decompressions per pass (the target is 0).
func BenchmarkObserveUnchangedState(b *testing.B) {
	suffix := "0123456789abcdef-c"
	secrets := []corev1.Secret{stateSecret(b, suffix, 1, "10")}
	e := &Engine{}
	if _, err := e.states.Decode("uid", suffix, secrets, true); err != nil {
		b.Fatal(err)
	}
	before := e.Decodes()
	var pass, baseline time.Duration
	for b.Loop() {
		start := time.Now()
		if _, err := e.states.Decode("uid", suffix, secrets, true); err != nil {
			b.Fatal(err)
		}
		mid := time.Now()
		if _, err := state.Decode(suffix, secrets); err != nil {
			b.Fatal(err)
		}
		pass, baseline = pass+mid.Sub(start), baseline+time.Since(mid)
	}
	b.ReportMetric(float64(pass)/float64(baseline), "pass/decode")
	b.ReportMetric(float64(e.Decodes()-before)/float64(b.N), "decodes/pass")
}

// TestClusterStateServedFromTheDecodeCache: machines and pools read their
// TerraformCluster's state (exports) on every pass; while it is unchanged
// the engine serves it without decompressing it again.
func TestClusterStateServedFromTheDecodeCache(t *testing.T) {
	tc := &infrav1.TerraformCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "demo", UID: "tc-uid"}}
	suffix, err := state.Suffix(tc.Namespace, state.KindCluster, tc.Name)
	if err != nil {
		t.Fatal(err)
	}
	secret := stateSecret(t, suffix, 3, "")
	secret.Namespace = tc.Namespace
	secret.Labels = state.PieceLabels(suffix)
	c := fake.NewClientBuilder().WithObjects(&secret).Build()
	e := &Engine{APIReader: c}
	var r roles.ClusterStateReader = rolesReader{Reader: c, e: e}
	for range 5 {
		st, err := r.ReadClusterState(t.Context(), tc, suffix)
		if err != nil || st.Serial != 3 {
			t.Fatalf("ReadClusterState = %v, %v; want serial 3", st, err)
		}
	}
	if n := e.Decodes(); n != 1 {
		t.Errorf("%d decompressions for 5 reads of an unchanged cluster state, want 1", n)
	}
	secret.Data = stateSecret(t, suffix, 4, "").Data
	if err := c.Update(t.Context(), &secret); err != nil {
		t.Fatal(err)
	}
	if st, err := r.ReadClusterState(t.Context(), tc, suffix); err != nil || st.Serial != 4 || e.Decodes() != 2 {
		t.Errorf("after a change: serial %v (%v) after %d decompressions, want serial 4 after 2", st, err, e.Decodes())
	}
}

// A pass that listed the state without its data because it was known, and
// finds it forgotten when it decodes (another pass stored an older read
// meanwhile), reads again: it never takes the metadata for a state, and
// remembers nothing of it.
func TestDecodeNeverRemembersMetadataAlone(t *testing.T) {
	e := &Engine{}
	suffix := "0123456789abcdef-c"
	meta := []corev1.Secret{{ObjectMeta: stateSecret(t, suffix, 2, "20").ObjectMeta}}
	if _, err := e.states.Decode("uid", suffix, meta, false); !errors.Is(err, custody.ErrStateMoved) {
		t.Fatalf("decode of unknown Secrets without their data = %v, want custody.ErrStateMoved", err)
	}
	full := []corev1.Secret{stateSecret(t, suffix, 2, "20")}
	if st, err := e.states.Decode("uid", suffix, full, true); err != nil || st.Serial != 2 {
		t.Fatalf("the read again = %v, %v; want serial 2", st, err)
	}
}
