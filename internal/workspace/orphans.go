package workspace

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/protection"
	"captf.io/captf/internal/records"
	"captf.io/captf/internal/roles"
	"captf.io/captf/pkg/state"
)

// keptSecrets reads, live and by their metadata, the Secrets the object
// kind/name keeps besides its state pieces: its state backups, its input
// records and its plan key.
func (e *Engine) keptSecrets(ctx context.Context, namespace, kind, name string) ([]metav1.PartialObjectMetadata, error) {
	suffix, err := state.Suffix(namespace, kind, name)
	if err != nil {
		return nil, err
	}
	list := secretMetadataList()
	if err := e.APIReader.List(ctx, list, client.InNamespace(namespace), backupSetsOf(suffix)); err != nil {
		return nil, fmt.Errorf("listing the state backups: %w", err)
	}
	kept := list.Items
	for _, n := range []string{records.AttemptName(kind, name), records.AppliedName(kind, name), records.PlanKeyName(kind, name)} {
		s := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"}}
		if err := e.APIReader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: n}, s); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return nil, fmt.Errorf("reading Secret %s: %w", n, err)
		}
		kept = append(kept, *s)
	}
	return kept, nil
}

// releaseOrphans releases from captf.io/state-protection the backups and
// plan key of key, an object of role's kind that no longer exists, that
// only it owned, once its release is done: its state and its records are
// gone. The release deleted the plan key and unprotected the backups; a
// pass that read the object before that release (a second manager's) can
// make the key again (ensurePlanKey) or protect the backups again
// (protectDeleting), and once the garbage collector deletes them nothing
// else would ever let them go: they would hold their namespace's deletion
// for ever. The object's delete event, which reaches the manager after
// that pass read the object, brings a pass here once that one is done.
// Released, they go with their owner (the garbage collector checks its
// UID). An object whose finalizer was stripped by hand leaves its state or
// records: then everything stays protected, for its user to read and let
// go of (docs/concepts/state-protection.md). Those labelled
// captf.io/retained-from-uid stay, and so does what an object of the same
// name made since owns.
func (e *Engine) releaseOrphans(ctx context.Context, role roles.Role, key client.ObjectKey) error {
	kept, err := e.keptSecrets(ctx, key.Namespace, role.Kind(), key.Name)
	if err != nil {
		return err
	}
	var orphans []*metav1.PartialObjectMetadata
	for i := range kept {
		if isRecord(kept[i].Name, role.Kind(), key.Name) {
			return nil // not released by CAPTF, or a Job started since
		}
		if onlyOwnedBy(&kept[i], role.Kind(), key.Name) {
			orphans = append(orphans, &kept[i])
		}
	}
	if len(orphans) == 0 {
		return nil
	}
	suffix, err := state.Suffix(key.Namespace, role.Kind(), key.Name)
	if err != nil {
		return err
	}
	pieces := secretMetadataList()
	if err := e.APIReader.List(ctx, pieces, client.InNamespace(key.Namespace), client.MatchingLabelsSelector{Selector: state.Selector(suffix)},
		client.Limit(1)); err != nil {
		return fmt.Errorf("listing the state Secrets: %w", err)
	}
	if len(pieces.Items) > 0 {
		return nil // not released by CAPTF: the state is its user's to read
	}
	// Read again: an object of this name made since owns what names its UID.
	live := role.New()
	switch err := e.APIReader.Get(ctx, key, live); {
	case apierrors.IsNotFound(err):
		live = nil
	case err != nil:
		return fmt.Errorf("reading %s %s: %w", role.Kind(), key, err)
	}
	for _, s := range orphans {
		if live != nil && ownedByUID(s, live.GetUID()) {
			continue
		}
		ctrl.LoggerFrom(ctx).Info("Releasing a Secret of an object that is gone", "secret", klog.KObj(s))
		s.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"}
		if err := protection.Release(ctx, e.Client, s); err != nil && !apierrors.IsConflict(err) {
			return err
		}
	}
	return nil
}

// isRecord: name is an input record of kind/name.
func isRecord(name, kind, object string) bool {
	return name == records.AttemptName(kind, object) || name == records.AppliedName(kind, object)
}

// onlyOwnedBy: s is protected, not retained, and every owner reference it
// has names kind/name.
func onlyOwnedBy(s *metav1.PartialObjectMetadata, kind, name string) bool {
	if !protection.Protected(s) || s.Labels[infrav1.RetainedFromUIDLabel] != "" || len(s.OwnerReferences) == 0 {
		return false
	}
	for _, ref := range s.OwnerReferences {
		if ref.Kind != kind || ref.Name != name {
			return false
		}
	}
	return true
}

func ownedByUID(s *metav1.PartialObjectMetadata, uid types.UID) bool {
	for _, ref := range s.OwnerReferences {
		if ref.UID == uid {
			return true
		}
	}
	return false
}
