// Package roles holds what differs between the three workload kinds
// (TerraformCluster, TerraformMachine, TerraformMachinePool): how each finds
// and checks its Cluster API owner, how it renders its role inputs from what
// it observed, and how its module's outputs land on its spec and status.
// The lifecycle they share lives in internal/workspace, which asks a Role
// and never branches on the kind: what one kind does that the others do
// not is a Capability (has dependents, guards every apply, guards exports,
// refreshes after an apply, keeps applies in Ready), or an interface the
// kind implements (a Remediator counts a machine's unhealthy samples and
// asks Cluster API to replace its Machine; Dependents names the machines
// and pools a deleting cluster waits for). A role reads through the
// reader it is given and never writes: its after-step and its remediation
// return the owner patch, conditions and events they want, and the engine
// acts on them.
package roles
