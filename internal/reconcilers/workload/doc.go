// Package workload holds the three thin reconcilers of the workload kinds
// (TerraformCluster, TerraformMachine, TerraformMachinePool): each picks
// its role, says what it watches, and hands every request to the shared
// lifecycle in internal/workspace.
package workload
