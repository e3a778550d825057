package state

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// Surplus returns the names of the state Secrets of suffix that Terraform
// deleted while shrinking the state and that a finalizer still keeps: each
// is being deleted and comes after the state's last piece (the first piece,
// in index order, shorter than ChunkSize). Terraform's own reader would
// append them to the state, so they must go before its next run; every
// piece of the state itself is kept, even one being deleted. secrets must
// carry their data.
func Surplus(suffix string, secrets []corev1.Secret) []string {
	type piece struct {
		index int
		s     *corev1.Secret
	}
	pieces := make([]piece, 0, len(secrets))
	for i := range secrets {
		if index, ok := chunkIndex(suffix, secrets[i].Name); ok {
			pieces = append(pieces, piece{index, &secrets[i]})
		}
	}
	slices.SortFunc(pieces, func(a, b piece) int { return a.index - b.index })
	var out []string
	ended := false
	for i, p := range pieces {
		ended = ended || p.index != i // a gap ends the state too
		if ended && p.s.DeletionTimestamp != nil {
			out = append(out, p.s.Name)
		}
		ended = ended || len(p.s.Data[DataKey]) < ChunkSize
	}
	return out
}
