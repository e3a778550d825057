// Package machinetemplate is the TerraformMachineTemplate controller: it
// resolves what the cluster autoscaler's Cluster API provider reads to
// scale a MachineDeployment of the template from zero, status.capacity,
// status.nodeInfo and status.capacitySource, from spec.capacity (which
// replaces the image's label wholesale) or from the module image's
// io.captf.capacity and io.captf.node-info labels, read from its registry
// without pulling it; and it checks the template's variables against the
// image's io.captf.variables-schema (VariablesValid). Observe (the labels,
// the variables sources), decide (Resolve, Variables: pure), act (one
// status patch, events, the metric, the retry).
package machinetemplate
