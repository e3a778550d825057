package gates

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/decide"
	"captf.io/captf/pkg/state"
)

// gated: the operations that write infrastructure a cluster and its
// machines share.
func gated(op decide.Operation) bool {
	return op == decide.OpApply || op == decide.OpDestroy || op == decide.OpRestore
}

// ClusterGate is the cluster operation gate (writer preference, write
// before read on both sides): a TerraformCluster's apply, destroy or
// restore never overlaps one of its machines' or pools'. It runs after the
// run lease is taken; no obstacle means go, else what stops the Job and
// why.
func (k Keeper) ClusterGate(ctx context.Context, s Subject, jobName string, op decide.Operation, now time.Time) (o decide.Obstacle, why string, err error) {
	// An evacuated destroy passes: no other Job of the cluster starts in
	// a namespace being deleted, and its own wait for the dependents
	// orders a cluster's destroy after theirs.
	if !k.Options.ClusterOperationGate || !gated(op) || s.ClusterName == "" || s.Evacuated {
		return "", "", nil
	}
	name := ClusterLeaseName(s.Namespace, s.ClusterName)
	if s.HasDependents {
		ok, msg, err := k.acquire(ctx, s, name, "cluster", jobName, op, now)
		if err != nil || !ok {
			return decide.ObstacleRunLeaseBusy, msg, err
		}
		busy, err := k.machineOperations(ctx, s, now)
		if err != nil || len(busy) == 0 {
			return "", "", err
		}
		// Both leases stay held: machines see the cluster operation coming.
		shown := busy[:min(len(busy), 5)]
		return decide.ObstacleMachineOperations,
			fmt.Sprintf("The %s waits for %d machine and pool operations of cluster %s to finish: %s", op, len(busy), s.ClusterName, strings.Join(shown, ", ")), nil
	}
	lease := &coordinationv1.Lease{}
	err = k.Reader.Get(ctx, client.ObjectKey{Namespace: s.Namespace, Name: name}, lease)
	if apierrors.IsNotFound(err) {
		return "", "", nil
	}
	if err != nil {
		return "", "", err
	}
	holder := ptr.Deref(lease.Spec.HolderIdentity, "")
	if holder == "" {
		return "", "", nil
	}
	if free, err := k.leaseFree(ctx, lease, holder, now); err != nil || free {
		return "", "", err
	}
	if err := k.release(ctx, s, RunLeaseName(s.suffix()), jobName); err != nil {
		return "", "", err
	}
	return decide.ObstacleClusterOperation,
		fmt.Sprintf("The %s waits for the operation of cluster %s (Job %s) to finish", op, s.ClusterName, holder), nil
}

// machineOperations lists the Jobs that hold live run leases of the
// cluster's machines and pools for an apply, destroy or restore.
func (k Keeper) machineOperations(ctx context.Context, s Subject, now time.Time) ([]string, error) {
	var list coordinationv1.LeaseList
	cluster := s.labels()[state.LabelClusterName]
	if err := k.Reader.List(ctx, &list, client.InNamespace(s.Namespace),
		client.MatchingLabels{infrav1.LeaseLabel: "run", infrav1.ClusterNameLabel: cluster}); err != nil {
		return nil, err
	}
	var busy []string
	for i := range list.Items {
		l := &list.Items[i]
		kind := l.Labels[infrav1.OwnerKindLabel]
		holder := ptr.Deref(l.Spec.HolderIdentity, "")
		if kind == state.KindCluster || holder == "" || !gated(decide.Operation(l.Annotations[infrav1.LeaseOperationAnnotation])) {
			continue
		}
		free, err := k.leaseFree(ctx, l, holder, now)
		if err != nil {
			return nil, err
		}
		if !free {
			busy = append(busy, holder)
		}
	}
	sort.Strings(busy)
	return busy, nil
}
