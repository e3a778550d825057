package gates

import (
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"captf.io/captf/pkg/state"
)

// Options are the manager settings the gates use.
type Options struct {
	// ClusterOperationGate turns the cluster operation gate on
	// (--cluster-operation-gate).
	ClusterOperationGate bool
	// MaxActiveJobs caps the running Jobs of the manager, and
	// ClusterMaxActiveJobs those of one cluster unless its
	// spec.maxActiveJobs says otherwise; 0 means no cap.
	MaxActiveJobs, ClusterMaxActiveJobs int
	// WatchFilter is the manager's shard: it counts only its own Jobs.
	WatchFilter string
	// HolderGrace and HolderLeaseDuration replace, when set, the pod's
	// termination grace and the lease duration a dead holder is waited
	// out for (HolderWait). No flag sets them; tests shorten them.
	HolderGrace, HolderLeaseDuration time.Duration
}

// Keeper takes and frees the leases and counts the slots.
type Keeper struct {
	// Client writes Leases and lists CAPTF's Jobs and objects (cached).
	Client client.Client
	// Reader reads Leases, Jobs and pods live.
	Reader  client.Reader
	Options Options
}

// Subject is the object a Job runs for, as the gates see it.
type Subject struct {
	// Kind is the role's kind; Namespace and Name the object's.
	Kind, Namespace, Name string
	// ClusterName is the object's Cluster ("" for none).
	ClusterName string
	// RunNamespace is where its Jobs and leases are: its own namespace,
	// or its evacuation namespace.
	RunNamespace string
	// Evacuated: its destroy runs in its evacuation namespace, which no
	// other Job of the cluster uses.
	Evacuated bool
	// HasDependents: it is a cluster, which takes the cluster lease
	// itself and waits for its machines' operations.
	HasDependents bool
	// Deadline is its Jobs' activeDeadlineSeconds: a lease's backstop.
	Deadline int64
	// ClusterMaxActiveJobs is its TerraformCluster's spec.maxActiveJobs
	// (nil: the manager's --cluster-max-active-jobs).
	ClusterMaxActiveJobs *int32
	// UID jitters its slot requeue.
	UID string
}

// suffix is the state suffix of the subject.
func (s Subject) suffix() string {
	sfx, _ := state.Suffix(s.Namespace, s.Kind, s.Name)
	return sfx
}

// labels are the owner labels of the subject's leases.
func (s Subject) labels() map[string]string {
	return state.OwnerLabels(s.Kind, s.Name, s.ClusterName)
}
