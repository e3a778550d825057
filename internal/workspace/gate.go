package workspace

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/decide"
	"captf.io/captf/pkg/state"
)

// clusterLeaseName is the cluster write lease of a Cluster.
func clusterLeaseName(namespace, cluster string) string {
	sum := sha256.Sum256([]byte(namespace + "/" + cluster))
	return "captf-cluster-" + hex.EncodeToString(sum[:8])
}

// gated: the operations that write infrastructure a cluster and its
// machines share.
func gated(op decide.Operation) bool {
	return op == decide.OpApply || op == decide.OpDestroy || op == decide.OpRestore
}

// gate is the cluster operation gate (writer preference, write before
// read on both sides): a TerraformCluster's apply, destroy or restore
// never overlaps one of its machines' or pools'. It runs after the run
// lease is taken; "" means go.
func (p *pass) gate(ctx context.Context, jobName string, op decide.Operation) (reason, why string, err error) {
	// An evacuated destroy passes: no other Job of the cluster starts in
	// a namespace being deleted, and its own wait for the dependents
	// orders a cluster's destroy after theirs.
	if !p.e.Options.ClusterOperationGate || !gated(op) || p.owner.ClusterName == "" || p.evacNS != nil {
		return "", "", nil
	}
	name := clusterLeaseName(p.obj.GetNamespace(), p.owner.ClusterName)
	if p.caps().Dependents {
		ok, msg, err := p.acquireLease(ctx, name, "cluster", jobName, op)
		if err != nil || !ok {
			return infrav1.WaitingForRunLeaseReason, msg, err
		}
		busy, err := p.machineOperations(ctx)
		if err != nil || len(busy) == 0 {
			return "", "", err
		}
		// Both leases stay held: machines see the cluster operation coming.
		shown := busy[:min(len(busy), 5)]
		return infrav1.WaitingForMachineOperationsReason,
			fmt.Sprintf("The %s waits for %d machine and pool operations of cluster %s to finish: %s", op, len(busy), p.owner.ClusterName, strings.Join(shown, ", ")), nil
	}
	lease := &coordinationv1.Lease{}
	err = p.e.APIReader.Get(ctx, client.ObjectKey{Namespace: p.obj.GetNamespace(), Name: name}, lease)
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
	if free, err := p.leaseFree(ctx, lease, holder); err != nil || free {
		return "", "", err
	}
	if err := p.releaseLease(ctx, runLeaseName(p.suffix()), jobName); err != nil {
		return "", "", err
	}
	return infrav1.WaitingForClusterOperationReason,
		fmt.Sprintf("The %s waits for the operation of cluster %s (Job %s) to finish", op, p.owner.ClusterName, holder), nil
}

// machineOperations lists the Jobs that hold live run leases of the
// cluster's machines and pools for an apply, destroy or restore.
func (p *pass) machineOperations(ctx context.Context) ([]string, error) {
	var list coordinationv1.LeaseList
	cluster := state.OwnerLabels(p.role.Kind(), p.obj.GetName(), p.owner.ClusterName)[state.LabelClusterName]
	if err := p.e.APIReader.List(ctx, &list, client.InNamespace(p.obj.GetNamespace()),
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
		free, err := p.leaseFree(ctx, l, holder)
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
