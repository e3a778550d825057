package metrics_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"captf.io/captf/internal/metrics"
	"captf.io/captf/internal/test/envtest"
	"captf.io/captf/pkg/state"
)

var env *envtest.Env

func TestMain(m *testing.M) {
	os.Exit(envtest.Main(m, &env, envtest.Options{}))
}

// chunkedState stores a state of about 2.5 MB of incompressible data the
// way Terraform does: gzip, then 1 MiB pieces.
func chunkedState(t *testing.T, ns, suffix string) int {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, 7))
	blob := make([]byte, 2_500_000)
	for i := range blob {
		blob[i] = "0123456789abcdefghijklmnopqrstuvwxyz"[rng.IntN(36)]
	}
	raw := fmt.Sprintf(`{"version":4,"terraform_version":"1.8.5","serial":3,"lineage":"l","outputs":{},`+
		`"resources":[{"mode":"managed","type":"random_string","name":"blob","instances":[{"attributes":{"result":%q}}]}]}`, blob)
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	_, _ = w.Write([]byte(raw))
	_ = w.Close()
	data, total := gz.Bytes(), gz.Len()
	for i := 0; len(data) > 0; i++ {
		n := min(state.ChunkSize, len(data))
		name := state.SecretName(suffix)
		if i > 0 {
			name = state.ChunkName(suffix, i)
		}
		sec := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{
				"tfstate": "true", "tfstateSecretSuffix": suffix, "tfstateWorkspace": "default"}},
			Data: map[string][]byte{state.DataKey: data[:n]},
		}
		if err := env.Client.Create(context.Background(), sec); err != nil {
			t.Fatal(err)
		}
		data = data[n:]
	}
	return total
}

func TestStateBytesOfAChunkedState(t *testing.T) {
	envtest.Require(t, env)
	suffix, err := state.Suffix("default", "TerraformCluster", "big")
	if err != nil {
		t.Fatal(err)
	}
	total := chunkedState(t, "default", suffix)
	cs := kubernetes.NewForConfigOrDie(env.Config)
	st, err := state.Read(context.Background(), state.ClientsetLister(cs.CoreV1()), "default", suffix)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Secrets) < 2 {
		t.Fatalf("the state spans %d Secrets, want several", len(st.Secrets))
	}
	metrics.ObserveState("TerraformCluster", "default", "big", st)
	if got := testutil.ToFloat64(metrics.StateBytes.WithLabelValues("TerraformCluster", "default", "big")); got != float64(total) {
		t.Errorf("captf_state_bytes = %v, want %d", got, total)
	}
	if got := testutil.ToFloat64(metrics.StateResources.WithLabelValues("TerraformCluster", "default", "big")); got != 1 {
		t.Errorf("captf_state_resources = %v, want 1", got)
	}
	exposition := fmt.Sprintf(`
# HELP captf_state_bytes [ALPHA] Compressed bytes of the object's Terraform/OpenTofu state, summed over its Secrets.
# TYPE captf_state_bytes gauge
captf_state_bytes{kind="TerraformCluster",name="big",namespace="default"} %d
`, total)
	if err := testutil.GatherAndCompare(ctrlmetrics.Registry, strings.NewReader(exposition), "captf_state_bytes"); err != nil {
		t.Errorf("the metrics endpoint's registry: %v", err)
	}
	metrics.Forget("TerraformCluster", "default", "big")
	if n := testutil.CollectAndCount(metrics.StateBytes); n != 0 {
		t.Errorf("%d series left after Forget", n)
	}
}
