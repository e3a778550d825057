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

// Parts returns the names of the state's pieces after the base Secret
// (-part-1, -part-2, …), in index order, leaving out the surplus pieces
// (Surplus) Terraform already deleted: a state with parts can be read
// only by a runtime that chunks, Terraform 1.6 and later. secrets must
// carry their data.
func Parts(suffix string, secrets []corev1.Secret) []string {
	surplus := Surplus(suffix, secrets)
	type part struct {
		index int
		name  string
	}
	var parts []part
	for _, s := range secrets {
		if index, ok := chunkIndex(suffix, s.Name); ok && index > 0 && !slices.Contains(surplus, s.Name) {
			parts = append(parts, part{index, s.Name})
		}
	}
	slices.SortFunc(parts, func(a, b part) int { return a.index - b.index })
	out := make([]string, len(parts))
	for i, p := range parts {
		out[i] = p.name
	}
	return out
}
