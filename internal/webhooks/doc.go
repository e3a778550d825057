// Package webhooks owns CAPTF's admission validators, one file per kind,
// and SetupWebhooks, which serves them from the manager's webhook server.
//
// Every validator builds a field.ErrorList holding all violations at once
// and returns apierrors.NewInvalid, naming each field and what to do. So far:
//
//   - TerraformClusterIdentity (identity.go): secretRef, allowedNamespaces
//     and the SubjectAccessReview that proves the requesting user may get
//     the source Secret; its delete check (identity_delete.go) is a separate
//     webhook entry (failurePolicy Ignore) refusing to delete an identity in
//     use;
//   - TerraformCluster, TerraformMachine, TerraformMachinePool
//     (terraformcluster.go, terraformmachine.go, terraformmachinepool.go):
//     the jobs policy rules shared in jobs.go (env names the runner owns).
//
// No validator ever puts a Secret's data or an env value into an error.
package webhooks
