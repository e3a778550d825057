// Package roles holds what differs between the three workload kinds
// (TerraformCluster, TerraformMachine, TerraformMachinePool): how each finds
// and checks its Cluster API owner, how it renders its role inputs from what
// it observed, and how its module's outputs land on its spec and status.
// The lifecycle they share lives in internal/workspace, which asks a Role
// and never branches on the kind.
package roles
