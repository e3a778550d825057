// Package runnerrbac owns what lets CAPTF's Jobs run in a namespace: the
// default runner ServiceAccount and the RoleBinding captf-runner that binds
// the ServiceAccounts in use to the ClusterRole captf-runner (Ensure, at
// each pass), and the orphan sweep that prunes the RoleBinding to the
// ServiceAccounts still in use and removes CAPTF's ServiceAccounts,
// RoleBindings and Leases from namespaces that no longer hold any CAPTF
// object (Sweeper, on the leader, at start and every sync period).
package runnerrbac
