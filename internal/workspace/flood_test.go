package workspace

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"captf.io/captf/internal/roles"
	"captf.io/captf/internal/test/envtest"
	"captf.io/captf/pkg/state"
)

var env *envtest.Env

func TestMain(m *testing.M) {
	os.Exit(envtest.Main(m, &env, envtest.Options{ClusterAPICRDs: true}))
}

// measuring is the API server's reader, counting the Secret data bytes
// its answers carried: what a read cost the manager's memory.
type measuring struct {
	client.Reader
	bytes atomic.Int64
}

func (m *measuring) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	err := m.Reader.List(ctx, list, opts...)
	if l, ok := list.(*corev1.SecretList); ok {
		for _, s := range l.Items {
			for _, v := range s.Data {
				m.bytes.Add(int64(len(v)))
			}
		}
	}
	return err
}

// stateLabels are the labels the backend gives the state Secrets of suffix.
func stateLabels(suffix string) map[string]string {
	labels := state.OwnerLabels("TerraformCluster", "victim", "victim")
	maps.Copy(labels, state.PieceLabels(suffix))
	return labels
}

// flood creates n Secrets of size bytes each carrying the state labels of
// suffix, as a hostile neighbour with edit rights in the namespace could.
func flood(t testing.TB, ns, suffix string, n, size int) {
	t.Helper()
	ctx := context.Background()
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	labels := stateLabels(suffix)
	payload := bytes.Repeat([]byte{'x'}, size)
	for i := range n {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("decoy-%03d", i), Labels: labels},
			Data: map[string][]byte{state.DataKey: payload}}
		// A loaded etcd may time out on a megabyte write that then lands:
		// try again, and take the Secret found there.
		err := retry.OnError(retry.DefaultBackoff, func(err error) bool { return !apierrors.IsAlreadyExists(err) }, func() error {
			return env.Client.Create(ctx, s.DeepCopy())
		})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
}

// Forty Secrets of 1 MiB (more than the 32 a state may span) carrying an object's state labels cost the
// manager no state data: the object reports its state corrupt from their
// metadata alone, at every pass, without fetching or decoding them again;
// a machine reading that cluster's state fetches none either. A few
// Secrets with names outside the state's sequence are refused the same way.
func TestStateFloodIsRefusedOnMetadata(t *testing.T) {
	envtest.Require(t, env)
	ctx := context.Background()
	testCases := []struct {
		name, ns string
		n        int
		reason   state.Reason
		message  string
	}{
		{"forty Secrets of 1 MiB", "flood-forty", 40, state.ReasonCorrupt, "state has 40 Secrets, more than the 32"},
		{"a few Secrets with other names", "flood-few", 3, state.ReasonInconsistent, "has an unexpected name"},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			suffix := "0123456789abcdef-c"
			flood(t, tc.ns, suffix, tc.n, 1<<20)
			reader := &measuring{Reader: env.Client}
			e := &Engine{APIReader: reader}
			for pass := range 3 {
				secrets, withData, err := e.states.List(ctx, e.APIReader, "victim-uid", tc.ns, suffix)
				if err != nil {
					t.Fatal(err)
				}
				if withData || len(secrets) != tc.n {
					t.Fatalf("pass %d: %d Secrets listed, withData %v; want their %d metadata only", pass, len(secrets), withData, tc.n)
				}
				_, err = e.states.Decode("victim-uid", suffix, secrets, withData)
				if reason, _ := state.ReasonOf(err); reason != tc.reason || !strings.Contains(err.Error(), tc.message) {
					t.Fatalf("pass %d: decode gave %v (%s), want %s: %q", pass, err, reason, tc.reason, tc.message)
				}
			}
			if n := reader.bytes.Load(); n != 0 || e.Decodes() != 0 {
				t.Errorf("three passes fetched %d bytes of Secret data and decoded %d times, want none", n, e.Decodes())
			}
			secrets, err := roles.StateLister(reader).List(ctx, tc.ns, state.Selector(suffix))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := state.Decode(suffix, secrets); err == nil || reader.bytes.Load() != 0 {
				t.Errorf("a machine's read of the flooded state gave %v after fetching %d bytes, want the refusal and none", err, reader.bytes.Load())
			}
		})
	}
}

// BenchmarkStatePassUnderFlood measures what a pass's state read
// allocates when a hundred Secrets of 1 MiB carry the object's state
// labels, against the same read of an ordinary state in the same run:
// "flood/plain" near 1 means the flood costs the manager about what its
// metadata costs, not its 100 MiB of data.
func BenchmarkStatePassUnderFlood(b *testing.B) {
	envtest.Require(b, env)
	ctx := context.Background()
	suffix := "0123456789abcdef-c"
	flood(b, "bench-flood", suffix, 100, 1<<20)
	plain := stateSecret(b, suffix, 1, "")
	plain.Namespace = "bench-plain"
	plain.Labels = stateLabels(suffix)
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: plain.Namespace}}); err != nil {
		b.Fatal(err)
	}
	if err := env.Client.Create(ctx, &plain); err != nil {
		b.Fatal(err)
	}
	pass := func(e *Engine, ns string) {
		secrets, withData, err := e.states.List(ctx, e.APIReader, "uid", ns, suffix)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = e.states.Decode("uid", suffix, secrets, withData)
	}
	// Bytes allocated per pass, after the first read of each state.
	perPass := func(ns string) float64 {
		e := &Engine{APIReader: env.Client}
		pass(e, ns)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range 20 {
			pass(e, ns)
		}
		runtime.ReadMemStats(&after)
		return float64(after.TotalAlloc-before.TotalAlloc) / 20
	}
	plainB, floodB := perPass("bench-plain"), perPass("bench-flood")
	e := &Engine{APIReader: env.Client}
	for b.Loop() {
		pass(e, "bench-flood")
	}
	b.ReportMetric(floodB, "flood-B/pass")
	b.ReportMetric(floodB/plainB, "flood/plain")
}
