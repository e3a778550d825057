// Package state reads the Terraform/OpenTofu state that the runtimes' own
// kubernetes backend keeps in Secrets, the way CAPTF needs it: names, labels,
// and a reader that never trusts what it reads.
//
// What it promises:
//
//   - Names. Suffix derives an object's state suffix from its namespace, Kind
//     and name (never its UID, so it survives clusterctl move); SecretName,
//     ChunkName and LockLeaseName give the names the backend uses for it. A
//     suffix never ends in -<digits>, which is what lets chunks be ordered
//     by the number after the last hyphen.
//   - Labels. The backend's own labels, Selector for the Secrets of one
//     suffix, and OwnerLabels/HCLMap for the label map the runner hands to
//     the backend. That map must never change for an existing object: the
//     backend selects its chunks by the whole map.
//   - Reading. Decode is a pure function from the listed Secrets to a State:
//     it checks the chunk sequence, streams the chunks through gunzip under
//     MaxChunks and MaxStateBytes, stops at the end of the first gzip member
//     (a surplus chunk left behind by a shrink is ignored), and decodes only
//     what CAPTF uses: serial, lineage, runtime version, root outputs and the
//     number of managed resources. Resource attributes are validated as JSON
//     and skipped, never decoded. Every failure is an *Error whose Reason is
//     the StateReadable condition reason and whose message names the cause,
//     never state content. Read lists the Secrets (uncached) and decodes.
//   - Cost. A read streams: the memory it takes is a few blocks of
//     decompressed state plus the outputs, whatever the size of the state
//     (DecodeRaw also holds the JSON it returns). Gunzip and JSON validation
//     run concurrently, so with a second core free a read costs about as
//     much as gunzip alone. Fingerprint, computed from metadata only, lets a
//     caller skip the read entirely when no state Secret changed.
//   - Secrecy. Outputs (sensitive or not) are never printed by any String,
//     Error or fmt method of this package.
package state
