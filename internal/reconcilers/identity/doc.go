// Package identity owns the TerraformClusterIdentity controller. It only
// reports status: Ready (True/SecretFound, False/SecretNotFound or
// False/CredentialsIncomplete; never Unknown) from an uncached read of the
// source Secret, and status.namespaces, the namespaces holding a mirror of
// the identity that an object uses. It copies nothing: the workload
// reconcilers write mirrors (internal/credentials). The source Secret is
// not watched, so the controller re-reads it every five minutes while Ready
// is True and every thirty seconds while it is False.
package identity
