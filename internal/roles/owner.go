package roles

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/pkg/state"
)

// ownerRef returns obj's owner reference to a Cluster API kind, nil when
// there is none.
func ownerRef(obj client.Object, kind string) *metav1.OwnerReference {
	for _, ref := range obj.GetOwnerReferences() {
		gv, err := schema.ParseGroupVersion(ref.APIVersion)
		if err == nil && gv.Group == clusterv1.GroupVersion.Group && ref.Kind == kind {
			return &ref
		}
	}
	return nil
}

// mismatch is the owner check of a machine or pool (contract §18.2): its
// owner references it back (checked by the caller), the owner reference's
// UID is the owner's, and its cluster-name label is the owner's cluster.
// It returns the failed check, "" when all hold.
func mismatch(obj client.Object, ref *metav1.OwnerReference, owner client.Object, ownerCluster string) string {
	if ref.UID != "" && ref.UID != owner.GetUID() {
		return fmt.Sprintf("the owner reference names UID %s, but %s %s has UID %s (it was recreated)", ref.UID, ref.Kind, owner.GetName(), owner.GetUID())
	}
	if label, ok := obj.GetLabels()[clusterv1.ClusterNameLabel]; ok && label != ownerCluster {
		return fmt.Sprintf("the %s label says cluster %q, but %s %s belongs to cluster %q", clusterv1.ClusterNameLabel, label, ref.Kind, owner.GetName(), ownerCluster)
	}
	return ""
}

// refersTo reports whether a Cluster API infrastructure reference names obj
// of kind.
func refersTo(ref clusterv1.ContractVersionedObjectReference, kind, name string) bool {
	return ref.APIGroup == infrav1.GroupVersion.Group && ref.Kind == kind && ref.Name == name
}

func notReady(status metav1.ConditionStatus, reason, format string, args ...any) *metav1.Condition {
	return &metav1.Condition{Type: infrav1.DependenciesReadyCondition, Status: status, Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// getOptional reads key into obj; false when it does not exist.
func getOptional(ctx context.Context, r client.Reader, key client.ObjectKey, obj client.Object) (bool, error) {
	if err := r.Get(ctx, key, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, err
	}
	return true, nil
}

// clusterOf reads the named Cluster and, when its infrastructure is a
// TerraformCluster, that TerraformCluster. Either may be nil.
func clusterOf(ctx context.Context, r client.Reader, namespace, name string) (*clusterv1.Cluster, *infrav1.TerraformCluster, error) {
	if name == "" {
		return nil, nil, nil
	}
	cluster, err := clusterNamed(ctx, r, namespace, name)
	if err != nil || cluster == nil {
		return nil, nil, err
	}
	ref := cluster.Spec.InfrastructureRef
	if ref.APIGroup != infrav1.GroupVersion.Group || ref.Kind != state.KindCluster || ref.Name == "" {
		return cluster, nil, nil
	}
	tc := &infrav1.TerraformCluster{}
	if ok, err := getOptional(ctx, r, client.ObjectKey{Namespace: namespace, Name: ref.Name}, tc); err != nil || !ok {
		return cluster, nil, err
	}
	return cluster, tc, nil
}

// clusterNamed reads the Cluster API Cluster namespace/name; nil when it
// does not exist.
func clusterNamed(ctx context.Context, r client.Reader, namespace, name string) (*clusterv1.Cluster, error) {
	cluster := &clusterv1.Cluster{}
	if ok, err := getOptional(ctx, r, client.ObjectKey{Namespace: namespace, Name: name}, cluster); err != nil || !ok {
		return nil, err
	}
	return cluster, nil
}

// paused reports the object's pause annotation or its Cluster's
// spec.paused.
func paused(obj client.Object, cluster *clusterv1.Cluster) bool {
	if _, ok := obj.GetAnnotations()[infrav1.PausedAnnotation]; ok {
		return true
	}
	return cluster != nil && cluster.Spec.Paused != nil && *cluster.Spec.Paused
}

// ownedBy finishes a machine or pool owner lookup: the Cluster, its
// TerraformCluster, and pause.
func ownedBy(ctx context.Context, r client.Reader, obj client.Object, o Owner) (Owner, error) {
	if o.ClusterName == "" {
		o.ClusterName = obj.GetLabels()[clusterv1.ClusterNameLabel]
	}
	cluster, tc, err := clusterOf(ctx, r, obj.GetNamespace(), o.ClusterName)
	if err != nil {
		return o, err
	}
	o.Cluster, o.Infra = cluster, tc
	o.Paused = paused(obj, cluster)
	return o, nil
}

// IsExternallyManaged reports Cluster API's managed-by annotation: CAPTF
// leaves such an object alone.
func IsExternallyManaged(obj client.Object) bool {
	_, ok := obj.GetAnnotations()[infrav1.ManagedByAnnotation]
	return ok
}

// member describes the Cluster API owner of a machine or pool.
type member struct {
	// ownerKind is the owner's kind, infraKind the object's, refField the
	// owner's field that must reference the object back.
	ownerKind, infraKind, refField string
	// waiting is the reason while no owner reference exists.
	waiting string
	// owner is an empty owner object to read into.
	owner client.Object
	// spec returns the owner's infrastructure reference and cluster name.
	spec func(client.Object) (clusterv1.ContractVersionedObjectReference, string)
}

// memberOwner finds and checks a machine's or pool's owner (contract
// §18.2), then its Cluster, TerraformCluster and pause.
func memberOwner(ctx context.Context, r client.Reader, obj client.Object, m member) (Owner, error) {
	o := Owner{}
	ref := ownerRef(obj, m.ownerKind)
	if ref == nil {
		o.NotReady = notReady(metav1.ConditionUnknown, m.waiting, "Waiting for a %s to own this %s", m.ownerKind, m.infraKind)
		o.Ownerless = true
		return ownedBy(ctx, r, obj, o)
	}
	name := ref.Name
	found, err := getOptional(ctx, r, client.ObjectKey{Namespace: obj.GetNamespace(), Name: name}, m.owner)
	if err != nil {
		return o, err
	}
	if !found {
		o.NotReady = notReady(metav1.ConditionFalse, infrav1.OwnerNotFoundReason, "The owning %s %s no longer exists", m.ownerKind, name)
		return ownedBy(ctx, r, obj, o)
	}
	infraRef, clusterName := m.spec(m.owner)
	o.Object, o.ClusterName = m.owner, clusterName
	if !refersTo(infraRef, m.infraKind, obj.GetName()) {
		o.NotReady = notReady(metav1.ConditionFalse, infrav1.OwnerMismatchReason,
			"%s %s's %s does not name this %s; CAPTF starts no Job and writes nothing to the %s", m.ownerKind, name, m.refField, m.infraKind, m.ownerKind)
		o.Mismatch = true
	} else if why := mismatch(obj, ref, m.owner, clusterName); why != "" {
		o.NotReady = notReady(metav1.ConditionFalse, infrav1.OwnerMismatchReason,
			"%s %s does not own this object: %s; CAPTF starts no Job and writes nothing to it", m.ownerKind, name, why)
		o.Mismatch = true
	}
	return ownedBy(ctx, r, obj, o)
}
