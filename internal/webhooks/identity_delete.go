package webhooks

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	infrav1 "captf.io/captf/api/v1alpha1"
)

// IdentityDeleteValidator refuses to delete a TerraformClusterIdentity that
// is in use. It is served as its own webhook entry with failurePolicy
// Ignore: when the webhook is down the delete goes through, the users report
// IdentityNotFound and their mirrors are revoked.
type IdentityDeleteValidator struct {
	// Reader lists workload objects in every namespace (uncached).
	Reader client.Reader
}

var _ admission.Validator[*infrav1.TerraformClusterIdentity] = &IdentityDeleteValidator{}

// ValidateCreate allows; IdentityValidator checks creates.
func (v *IdentityDeleteValidator) ValidateCreate(context.Context, *infrav1.TerraformClusterIdentity) (admission.Warnings, error) {
	return nil, nil
}

// ValidateUpdate allows; IdentityValidator checks updates.
func (v *IdentityDeleteValidator) ValidateUpdate(context.Context, *infrav1.TerraformClusterIdentity, *infrav1.TerraformClusterIdentity) (admission.Warnings, error) {
	return nil, nil
}

// ValidateDelete refuses while a TerraformCluster, TerraformMachine or
// TerraformMachinePool in any namespace (deleting ones included) resolves
// to the identity, naming one of them, or while status.namespaces still
// lists namespaces holding its mirror.
func (v *IdentityDeleteValidator) ValidateDelete(ctx context.Context, id *infrav1.TerraformClusterIdentity) (admission.Warnings, error) {
	user, err := v.findUser(ctx, id.Name)
	if err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("checking whether TerraformClusterIdentity %s is in use: %w", id.Name, err))
	}
	gr := infrav1.GroupVersion.WithResource("terraformclusteridentities").GroupResource()
	if user != "" {
		return nil, apierrors.NewForbidden(gr, id.Name, fmt.Errorf("%s uses it; delete those objects or point them at another identity first", user))
	}
	if len(id.Status.Namespaces) > 0 {
		return nil, apierrors.NewForbidden(gr, id.Name, fmt.Errorf("its credentials are still mirrored into namespaces %s for objects using it; delete those objects first",
			strings.Join(id.Status.Namespaces, ", ")))
	}
	return nil, nil
}

// findUser returns "Kind namespace/name" of one object resolving to the
// identity, or "". A machine or pool without identityRef resolves through
// its cluster: the TerraformCluster named by its cluster.x-k8s.io/cluster-name
// label in its namespace (an approximation of the Cluster's
// infrastructureRef), then that cluster's spec.defaults.identityRef, then
// its spec.identityRef.
func (v *IdentityDeleteValidator) findUser(ctx context.Context, identity string) (string, error) {
	clusters := &infrav1.TerraformClusterList{}
	if err := v.Reader.List(ctx, clusters); err != nil {
		return "", err
	}
	byKey := make(map[client.ObjectKey]*infrav1.TerraformCluster, len(clusters.Items))
	for i := range clusters.Items {
		c := &clusters.Items[i]
		if names(c.Spec.IdentityRef, identity) {
			return "TerraformCluster " + c.Namespace + "/" + c.Name, nil
		}
		byKey[client.ObjectKeyFromObject(c)] = c
	}
	viaCluster := func(ns string, labels map[string]string) bool {
		c := byKey[client.ObjectKey{Namespace: ns, Name: labels[infrav1.ClusterNameLabel]}]
		if c == nil {
			return false
		}
		if c.Spec.Defaults != nil && c.Spec.Defaults.IdentityRef != nil {
			return names(c.Spec.Defaults.IdentityRef, identity)
		}
		return names(c.Spec.IdentityRef, identity)
	}

	machines := &infrav1.TerraformMachineList{}
	if err := v.Reader.List(ctx, machines); err != nil {
		return "", err
	}
	for _, m := range machines.Items {
		if names(m.Spec.IdentityRef, identity) || (m.Spec.IdentityRef == nil && viaCluster(m.Namespace, m.Labels)) {
			return "TerraformMachine " + m.Namespace + "/" + m.Name, nil
		}
	}
	pools := &infrav1.TerraformMachinePoolList{}
	if err := v.Reader.List(ctx, pools); err != nil {
		return "", err
	}
	for _, p := range pools.Items {
		if names(p.Spec.IdentityRef, identity) || (p.Spec.IdentityRef == nil && viaCluster(p.Namespace, p.Labels)) {
			return "TerraformMachinePool " + p.Namespace + "/" + p.Name, nil
		}
	}
	return "", nil
}

// names reports whether ref names the identity (kind empty or
// TerraformClusterIdentity).
func names(ref *infrav1.IdentityReference, identity string) bool {
	return ref != nil && ref.Name == identity &&
		(ref.Kind == "" || ref.Kind == infrav1.IdentityKindTerraformClusterIdentity)
}
