// Package imagemeta reads what a module image says of itself, its config
// labels (the io.captf.* labels of the image contract: runtime, role,
// contract, capacity), without pulling it: from its registry (the
// manifest and the config blob, Registry), or from any other source with
// the same answer (Func; the local environment serves its image store's).
// Answers are kept a while (Cached), so that admission and reconciles do
// not ask a registry each time.
package imagemeta
