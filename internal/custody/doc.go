// Package custody keeps an object's state Secrets, and what goes with them
// (its state backups, inputs records and plan key), in the object's
// custody: owned by it and protected by CAPTF's finalizer, backed up at
// each new serial and pruned to the configured count. It owns:
//   - ownership: which Secrets are the object's and lack its owner or
//     protection (Unkept, UnkeptOf; its records and plan key read live,
//     UnkeptRecords), and giving them back (Reown);
//   - backups: what a backup of the state read holds, unless it is taken
//     already (BackupOf), taking one of a state that has not moved on
//     since it was read (TakeBackup), listing, writing and pruning backup
//     sets (PruneBackups), and what status.stateBackups lists;
//   - retained state: the Secrets deletionPolicy Retain hands to the user
//     (Kept, Retain) and a recreated object adopts (Adopt, RetainedFrom);
//   - restore requests: which backup captf.io/restore-state names
//     (RestoreSerial, RestoreBackup), and what a request asks before and
//     after its backup is looked for (AskRestore, RestoreAsk.Pick);
//   - protection while the object is deleted (ProtectDeleting), and
//     letting go of backups (ReleaseBackups), of the state pieces
//     Terraform deleted (ReleaseSurplus), and of the state, its lock, its
//     records and its plan key once the object is released
//     (ReleaseState);
//   - the state lock: who holds it (ReadLock) and whether its holder, one
//     of the object's Jobs, can still write (LockHolderDead, LockSince);
//   - the plan key: read, written and deleted (ReadPlanKey, WritePlanKey,
//     DeletePlanKey);
//   - the state a Job wrote, claimed: the inputs hash of the apply on its
//     base Secret, the object's owner and protection on every piece
//     (ClaimState);
//   - the state read: listed live, its data fetched only when it changed
//     and is plausible, decoded, and remembered per object (States), so
//     that an idle pass transfers and decompresses nothing.
//
// It writes only those Secrets, reads them and the lock, and knows the
// object only as their owner; it decides nothing of the lifecycle: when
// to re-own, back up, prune, retain, adopt, restore, make a plan key or
// claim the state is the engine's (internal/workspace).
package custody
