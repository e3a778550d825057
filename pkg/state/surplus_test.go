package state

import (
	"bytes"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestSurplus(t *testing.T) {
	const suffix = pieceSuffix
	now := metav1.Now()
	piece := func(index, size int, deleting bool) corev1.Secret { return testPiece(&now, index, size, deleting) }
	testCases := []struct {
		name    string
		secrets []corev1.Secret
		want    []string
	}{
		{"one piece", []corev1.Secret{piece(0, 10, false)}, nil},
		{"one piece being deleted (a foreground deletion) is the state", []corev1.Secret{piece(0, 10, true)}, nil},
		{"three pieces being deleted are the state", []corev1.Secret{piece(0, ChunkSize, true), piece(1, ChunkSize, true), piece(2, 5, true)}, nil},
		{"shrunk from three to one: the deleted pieces are surplus", []corev1.Secret{piece(2, 5, true), piece(0, 20, false), piece(1, ChunkSize, true)},
			[]string{ChunkName(suffix, 1), ChunkName(suffix, 2)}},
		{"shrunk from three to two", []corev1.Secret{piece(0, ChunkSize, false), piece(1, 7, true), piece(2, 5, true)}, []string{ChunkName(suffix, 2)}},
		{"a piece after the end that is not being deleted is left to Terraform", []corev1.Secret{piece(0, 20, false), piece(1, 5, false)}, nil},
		{"after a gap, only pieces being deleted", []corev1.Secret{piece(0, ChunkSize, false), piece(2, 5, true), piece(3, 5, false)}, []string{ChunkName(suffix, 2)}},
		{"another suffix's Secret is no piece", []corev1.Secret{piece(0, 20, false), {ObjectMeta: metav1.ObjectMeta{Name: "other", DeletionTimestamp: &now}}}, nil},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Surplus(suffix, tc.secrets); !slices.Equal(got, tc.want) {
				t.Errorf("Surplus = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestParts(t *testing.T) {
	const suffix = pieceSuffix
	now := metav1.Now()
	piece := func(index, size int, deleting bool) corev1.Secret { return testPiece(&now, index, size, deleting) }
	testCases := []struct {
		name    string
		secrets []corev1.Secret
		want    []string
	}{
		{"no state", nil, nil},
		{"one piece", []corev1.Secret{piece(0, 10, false)}, nil},
		{"chunked, listed out of order", []corev1.Secret{piece(2, 5, false), piece(0, ChunkSize, false), piece(1, ChunkSize, false)},
			[]string{ChunkName(suffix, 1), ChunkName(suffix, 2)}},
		{"chunked and being deleted with its namespace: still parts", []corev1.Secret{piece(0, ChunkSize, true), piece(1, 5, true)}, []string{ChunkName(suffix, 1)}},
		{"shrunk to one: the deleted surplus is no part", []corev1.Secret{piece(0, 20, false), piece(1, ChunkSize, true), piece(2, 5, true)}, nil},
		{"a stale part after a short base (an OpenTofu write) is a part", []corev1.Secret{piece(0, 20, false), piece(1, 5, false)}, []string{ChunkName(suffix, 1)}},
		{"another suffix's Secret is no part", []corev1.Secret{piece(0, 20, false), {ObjectMeta: metav1.ObjectMeta{Name: "tfstate-default-other-part-1"}}}, nil},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Parts(suffix, tc.secrets); !slices.Equal(got, tc.want) {
				t.Errorf("Parts = %v, want %v", got, tc.want)
			}
		})
	}
}

// pieceSuffix is the state suffix of testPiece's Secrets.
const pieceSuffix = "0123456789abcdef-c"

// testPiece is state piece index of pieceSuffix with size bytes of data,
// being deleted (since now) when deleting.
func testPiece(now *metav1.Time, index, size int, deleting bool) corev1.Secret {
	s := corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: ChunkName(pieceSuffix, index)}, Data: map[string][]byte{DataKey: bytes.Repeat([]byte{1}, size)}}
	if deleting {
		s.DeletionTimestamp = now
	}
	return s
}
