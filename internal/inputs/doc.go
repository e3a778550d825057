// Package inputs renders what a Job's module run receives, from objects the
// caller has already read (it makes no API calls):
//
//   - the role's contract inputs (ClusterRole, MachineRole, PoolRole, each a
//     RoleInputs whose Tfvars are the terraform.tfvars.json of v1alpha1);
//   - user variables, merged from spec.variablesFrom and spec.variables
//     (MergeVariables), and the two files of a run that carry them (Files);
//   - the generated root module (Root): a partial kubernetes backend that
//     init's flags complete, one variable per input, the image's module
//     called as module "role" { source = "../../module" }, and the role's
//     contract outputs re-exported as sensitive outputs;
//   - the inputs hash, keyed with the plan key over the h2 digest of a
//     canonical JSON encoding (Hash, Digest, Rekey,
//     ApprovalHash, Canonical);
//   - the size cap of a run's inputs (MaxBytes, CheckSize);
//   - one rendering of an object's inputs, files and hashes, from its
//     role's tfvars and its user variables (Render, ReadVariables);
//   - which errors of building the inputs are a problem of the object's
//     configuration, told on DependenciesReady (Problem).
//
// Errors never carry input values: bootstrap data and Secret-sourced
// variables are in them.
package inputs
