// Package writecheck owns a client whose every write first runs the check
// its context carries: a pass arms the check once it goes past the point
// where it may write (Arm), and any write through the client (Client)
// runs it before it is sent, failing with the check's error instead.
// Reads go through unchanged. The engine uses it to confirm an owner it
// read from the cache, live, before the first write that relies on it.
package writecheck
