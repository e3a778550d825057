package state

import (
	"context"
	"errors"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

func TestRead(t *testing.T) {
	pieces := cut(gz(t, smallState), 200)
	listErr := errors.New("connection refused")
	testCases := []struct {
		name       string
		list       []corev1.Secret
		err        error
		wantErr    error
		wantSerial int64
	}{
		{name: "state read", list: secretsFor(pieces...), wantSerial: 7},
		{name: "no state", wantErr: ErrNotFound},
		{name: "list fails", err: listErr, wantErr: listErr},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			lister := ListerFunc(func(_ context.Context, namespace string, selector labels.Selector) ([]corev1.Secret, error) {
				if namespace != "team-a" {
					t.Errorf("listed namespace %q, want team-a", namespace)
				}
				if got, want := selector.String(), Selector(testSuffix).String(); got != want {
					t.Errorf("listed with selector %q, want %q", got, want)
				}
				return tc.list, tc.err
			})
			st, err := Read(context.Background(), lister, "team-a", testSuffix)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Read() error = %v, want %v", err, tc.wantErr)
			}
			if _, isState := ReasonOf(err); errors.Is(err, listErr) && isState {
				t.Errorf("a failed List is reported as a state problem: %v", err)
			}
			if err == nil && st.Serial != tc.wantSerial {
				t.Errorf("Read() serial = %d, want %d", st.Serial, tc.wantSerial)
			}
		})
	}
}

func TestClientsetLister(t *testing.T) {
	pieces := cut(gz(t, smallState), 200)
	objs := []runtime.Object{}
	for _, s := range secretsFor(pieces...) {
		objs = append(objs, &s)
	}
	other := stateSecret("tfstate-default-fedcba9876543210-m", []byte("other"))
	other.Labels[LabelSecretSuffix] = "fedcba9876543210-m"
	unlabelled := stateSecret(ChunkName(testSuffix, len(pieces)), []byte("stray"))
	unlabelled.Labels = nil
	elsewhere := stateSecret(ChunkName(testSuffix, len(pieces)), []byte("other namespace"))
	elsewhere.Namespace = "team-b"
	client := fake.NewClientset(append(objs, &other, &unlabelled, &elsewhere)...)

	st, err := Read(context.Background(), ClientsetLister(client.CoreV1()), "default", testSuffix)
	if err != nil {
		t.Fatalf("Read() error = %v", err)
	}
	if len(st.Secrets) != len(pieces) {
		t.Errorf("read %d Secrets, want the %d of the state only", len(st.Secrets), len(pieces))
	}
}

// TestClientsetListerPages checks that a runaway number of chunks is
// detected without listing them all: pages are fetched until more than
// MaxChunks Secrets have arrived.
func TestClientsetListerPages(t *testing.T) {
	client := fake.NewClientset()
	var limits []int64
	client.PrependReactor("list", "secrets", func(action k8stesting.Action) (bool, runtime.Object, error) {
		opts := action.(k8stesting.ListActionImpl).ListOptions
		limits = append(limits, opts.Limit)
		page := &corev1.SecretList{}
		for i := range 20 {
			page.Items = append(page.Items, stateSecret(ChunkName(testSuffix, len(limits)*20+i), []byte("x")))
		}
		if len(limits) < 5 {
			page.Continue = "page-" + strconv.Itoa(len(limits))
		}
		return true, page, nil
	})
	_, err := Read(context.Background(), ClientsetLister(client.CoreV1()), "default", testSuffix)
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Read() error = %v, want corrupt (too many Secrets)", err)
	}
	if want := []int64{MaxChunks + 1, MaxChunks + 1 - 20}; len(limits) != len(want) || limits[0] != want[0] || limits[1] != want[1] {
		t.Errorf("List limits = %v, want %v: stop once past MaxChunks", limits, want)
	}
}
