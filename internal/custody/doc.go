// Package custody keeps an object's state Secrets, and what goes with them
// (its state backups, inputs records and plan key), in the object's
// custody: owned by it and protected by CAPTF's finalizer, backed up at
// each new serial and pruned to the configured count. It writes only
// those Secrets, knows the object only as their owner, and decides
// nothing of the lifecycle: when to re-own, back up or prune is the
// engine's (internal/workspace).
package custody
