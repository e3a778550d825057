package workspace

import (
	"context"
	"fmt"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/credentials"
	"captf.io/captf/internal/custody"
	"captf.io/captf/internal/protection"
	"captf.io/captf/internal/records"
	"captf.io/captf/pkg/state"
)

// keptSecrets are the Secrets deletionPolicy Retain keeps and a recreated
// object may adopt: the state, the input records, the plan key (it keys
// the inputs hash the state carries) and the state backups,
// read live, metadata only (retaining and adopting write no data, and
// Secrets that merely carry these labels must cost no memory).
func (p *pass) keptSecrets(ctx context.Context) ([]metav1.PartialObjectMetadata, error) {
	ns := p.obj.GetNamespace()
	var out []metav1.PartialObjectMetadata
	for _, sel := range []client.ListOption{
		client.MatchingLabelsSelector{Selector: state.Selector(p.suffix())},
		client.MatchingLabels{infrav1.StateBackupSuffixLabel: p.suffix()},
	} {
		list := state.SecretMetadataList()
		if err := p.e.APIReader.List(ctx, list, client.InNamespace(ns), sel); err != nil {
			return nil, err
		}
		out = append(out, list.Items...)
	}
	// The plan key keys the inputs hash the retained state carries.
	for _, name := range append(p.recordNames(), p.planKeyName()) {
		s := &metav1.PartialObjectMetadata{}
		s.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
		err := p.e.APIReader.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, s)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, *s)
	}
	for i := range out {
		out[i].SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	}
	return out, nil
}

// retain releases the object without a destroy (deletionPolicy Retain):
// its state, records and backups lose the object's owner reference, so the
// garbage collector keeps them, and their protection (they are the user's
// now), and are labelled with its UID; its Leases go and it leaves its
// credentials mirror. A Secret already being deleted (a foreground or
// namespace deletion reached it) keeps its protection: without it, it
// would be gone.
func (p *pass) retain(ctx context.Context) error {
	kept, err := p.keptSecrets(ctx)
	if err != nil {
		return err
	}
	for i := range kept {
		s := &kept[i]
		// Optimistic: a deletion that reached the Secret since it was read
		// must keep its protection.
		patch := client.MergeFromWithOptions(s.DeepCopy(), client.MergeFromWithOptimisticLock{})
		var refs []metav1.OwnerReference
		for _, r := range s.OwnerReferences {
			if r.UID != p.obj.GetUID() {
				refs = append(refs, r)
			}
		}
		s.OwnerReferences = refs
		if s.Labels == nil {
			s.Labels = map[string]string{}
		}
		s.Labels[infrav1.RetainedFromUIDLabel] = string(p.obj.GetUID())
		if !protection.Terminating(s) {
			protection.Unprotect(s)
		}
		if err := p.e.client().Patch(ctx, s, patch); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("retaining Secret %s: %w", s.Name, err)
		}
	}
	owner := state.OwnerLabels(p.role.Kind(), p.obj.GetName(), p.owner.ClusterName)
	if err := p.deleteEach(ctx, &coordinationv1.LeaseList{}, client.InNamespace(p.obj.GetNamespace()), client.MatchingLabels{
		infrav1.OwnerKindLabel: owner[state.LabelOwnerKind], infrav1.OwnerNameLabel: owner[state.LabelOwnerName], infrav1.LeaseLabel: "run",
	}); err != nil {
		return fmt.Errorf("deleting the run lease: %w", err)
	}
	if ref := p.eff.IdentityRef; ref != nil && ref.Kind != infrav1.IdentityKindSecret {
		if _, err := credentials.ReleaseMirror(ctx, p.e.client(), p.obj.GetNamespace(), ref.Name, p.obj); err != nil {
			return fmt.Errorf("releasing the credentials mirror: %w", err)
		}
	}
	p.eventf(corev1.EventTypeNormal, "InfrastructureRetained",
		"deletionPolicy Retain: the infrastructure was not destroyed; %d Secrets (state, inputs records, plan key, backups) are kept, labelled %s=%s",
		len(kept), infrav1.RetainedFromUIDLabel, p.obj.GetUID())
	if err := p.removeFinalizer(ctx); err != nil {
		return err
	}
	return p.deleteUnownedJobs(ctx)
}

// retainedFrom returns the UID of the deleted object whose retained state
// the object's state Secrets are ("" when they are its own).
func (p *pass) retainedFrom() string {
	for _, s := range p.stSecrets {
		if uid := s.Labels[infrav1.RetainedFromUIDLabel]; uid != "" && uid != string(p.obj.GetUID()) {
			return uid
		}
	}
	return ""
}

// adoptRetained makes the retained state, records and backups of a
// deleted object of the same name this object's (spec.adoptRetainedState):
// the label goes; the next adoption owns them.
func (p *pass) adoptRetained(ctx context.Context, from string) error {
	kept, err := p.keptSecrets(ctx)
	if err != nil {
		return err
	}
	for i := range kept {
		s := &kept[i]
		if s.Labels[infrav1.RetainedFromUIDLabel] == "" {
			continue
		}
		patch := client.MergeFrom(s.DeepCopy())
		delete(s.Labels, infrav1.RetainedFromUIDLabel)
		if s.Name != records.AttemptName(p.role.Kind(), p.obj.GetName()) && s.Name != records.AppliedName(p.role.Kind(), p.obj.GetName()) {
			s.OwnerReferences = append(custody.OwnersOtherThan(s, p.obj), records.OwnerReference(p.obj, p.role.Kind()))
		}
		protection.Protect(s)
		if err := p.e.client().Patch(ctx, s, patch); err != nil {
			return fmt.Errorf("adopting retained Secret %s: %w", s.Name, err)
		}
	}
	p.eventf(corev1.EventTypeNormal, "RetainedStateAdopted", "Adopted the state, inputs records, plan key and backups retained by deleted object %s", from)
	return nil
}
