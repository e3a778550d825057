// Package checkpoint keeps one manager's checkpoint: a blob it wants back
// after a restart or a change of leader, gzipped, in Secrets of the
// manager's own namespace (captf-checkpoint-<name>-<n>, labelled
// captf.io/checkpoint=<name>, at most ChunkBytes of it each).
//
// A checkpoint is a saving, never a truth: whatever it holds must be
// checked again before it is acted on, and losing it costs only time. So
// Load answers nothing (ErrUnusable) for a checkpoint that another build
// or another configuration of the manager wrote (its fingerprint), that a
// save cut in the middle left with chunks of two generations, or that does
// not decompress; Save writes every chunk of a new generation, then
// deletes the chunks it no longer uses.
//
// The Secrets name what the manager read, never what it read: no state,
// input, output or credential goes into a checkpoint.
package checkpoint
