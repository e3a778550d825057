// Package credentials owns how a TerraformClusterIdentity's credentials
// reach a namespace: whether an identity allows a namespace (Allowed), the
// mirror Secret captf-creds-<identity> that copies the source Secret into
// each namespace that uses it (EnsureMirror, ReleaseMirror, RevokeMirror),
// its name and source hash (MirrorName, SourceHash), and the IdentityAllowed
// and CredentialsMirrored conditions computed from what was observed
// (IdentityAllowedCondition, CredentialsMirroredCondition), and what an
// object's credentials are as a pass reads them, writing nothing
// (Resolve: an identity's check, or a local Secret; whether the mirror's
// write or deletion is due), and doing what is due (Resolved.Write).
//
// The source Secret and the mirror are read uncached, through the
// client.Reader the caller passes (the manager's API reader): the manager
// caches only the metadata of the Secrets it manages, and a rotation must be
// seen at once. Nothing here ever logs, returns in an error, or puts into a
// condition the value of a credential; only Secret names and key names.
package credentials
