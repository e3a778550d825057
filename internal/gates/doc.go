// Package gates owns what lets a decided Job start now, and what keeps two
// Jobs from writing one state: the object's run lease, the cluster
// operation gate (a cluster's apply, destroy or restore never overlaps its
// machines' and pools'), the Job slots (manager-wide and per cluster), and
// the rules that say when the holder of a lease or of the runtime's state
// lock can no longer write, and deleting an object's leases once it is
// released (DeleteLeases). It reads live, writes only Leases, and knows
// the object it gates only as a Subject.
package gates
