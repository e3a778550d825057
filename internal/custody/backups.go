package custody

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/protection"
	"captf.io/captf/internal/records"
	"captf.io/captf/internal/roles"
	"captf.io/captf/pkg/state"
)

// MaxListedBackups bounds status.stateBackups.
const MaxListedBackups = 16

// BackupSets selects the state backup Secrets of the state suffix.
func BackupSets(suffix string) client.MatchingLabels {
	return client.MatchingLabels{infrav1.StateBackupSuffixLabel: suffix, infrav1.StateBackupLabel: "true"}
}

// ListBackups reads the backup Secrets of the state suffix in namespace,
// live, by their metadata only: sizes are annotated, and Secrets that
// merely carry the backup labels must cost no memory.
func (k Keeper) ListBackups(ctx context.Context, namespace, suffix string) ([]corev1.Secret, error) {
	list := state.SecretMetadataList()
	if err := k.Reader.List(ctx, list, client.InNamespace(namespace), BackupSets(suffix)); err != nil {
		return nil, fmt.Errorf("listing the state backups: %w", err)
	}
	return state.MetadataOnly(list.Items), nil
}

// WriteBackup writes the backup set spec describes, owned by obj (of kind)
// and protected, its head Secret last; it returns the set's name and
// size. Secrets already there
// (an earlier pass wrote them) are kept.
func (k Keeper) WriteBackup(ctx context.Context, obj client.Object, kind string, spec state.BackupSpec) (name string, secrets int, err error) {
	set := state.NewBackupSet(spec)
	owner := records.OwnerReference(obj, kind)
	for i := len(set) - 1; i >= 0; i-- {
		set[i].OwnerReferences = []metav1.OwnerReference{owner}
		set[i].Finalizers = []string{protection.Finalizer}
		if err := k.Client.Create(ctx, &set[i]); err != nil && !apierrors.IsAlreadyExists(err) {
			return "", 0, fmt.Errorf("writing state backup %s: %w", set[i].Name, err)
		}
	}
	return set[0].Name, len(set), nil
}

// BackupRequest is a backup of the state as a pass read it.
type BackupRequest struct {
	// Kind and ClusterName are the object's (the set's labels), Suffix
	// its state's.
	Kind, Suffix, ClusterName string
	// State is the state decoded; Secrets its pieces as read, WithData
	// when they carry their data (else only their metadata: the state did
	// not change since its last decode).
	State    *state.State
	Secrets  []corev1.Secret
	WithData bool
	// InputsHash is the state's inputs hash, SourceJob the Job that wrote
	// it, Now when the backup is taken.
	InputsHash, SourceJob string
	Now                   time.Time
}

// TakeBackup writes the backup set of the state r describes, owned by obj
// and protected, unless sets (the object's backup sets) hold it already,
// or the state moved on since it was read: pieces read by their metadata
// only are read again, live and with their data, and a state whose
// pieces changed meanwhile is left to the next pass. name is the set
// written ("" when none) and pieces its size; secrets are the state's
// pieces with their data, when they were read again and still are the
// state r describes.
func (k Keeper) TakeBackup(ctx context.Context, obj client.Object, r BackupRequest, sets []state.Backup) (name string, pieces int, secrets []corev1.Secret, err error) {
	current := r.Secrets
	if !r.WithData {
		read, err := roles.ListStateData(ctx, k.Reader, obj.GetNamespace(), state.Selector(r.Suffix))
		if err != nil {
			return "", 0, nil, fmt.Errorf("reading the state to back up: %w", err)
		}
		if state.Fingerprint(read) != r.State.Fingerprint {
			return "", 0, nil, nil // the state moved on: the next pass backs it up
		}
		current, secrets = read, read
	}
	spec, taken := BackupOf(r.State, current, sets, r.Suffix)
	if taken {
		return "", 0, secrets, nil
	}
	spec.Namespace, spec.InputsHash, spec.TakenAt, spec.SourceJob = obj.GetNamespace(), r.InputsHash, r.Now, r.SourceJob
	spec.Labels = state.OwnerLabels(r.Kind, obj.GetName(), r.ClusterName)
	name, pieces, err = k.WriteBackup(ctx, obj, r.Kind, spec)
	return name, pieces, secrets, err
}

// PruneBackups deletes the backup sets Prunable prunes of sets (keep
// complete sets, pinned the serial a restore request names), their
// Secrets found among secrets (their listing), and returns those kept.
// pruned counts the sets whose deletion was tried, also when err says one
// failed.
func (k Keeper) PruneBackups(ctx context.Context, sets []state.Backup, keep int, pinned string, secrets []corev1.Secret) (kept []state.Backup, pruned int, err error) {
	kept, gone := Prunable(sets, keep, pinned)
	for _, b := range gone {
		pruned++
		if err := k.DeleteBackup(ctx, b, secrets); err != nil {
			return nil, pruned, err
		}
	}
	return kept, pruned, nil
}

// Prunable splits backup sets (newest first) into those kept and those
// to delete: keep complete sets are kept (a set whose serial pinned names,
// the one a restore request asks for, is kept and not counted), and of
// the incomplete ones only the newest, which may still be being written.
func Prunable(sets []state.Backup, keep int, pinned string) (kept, pruned []state.Backup) {
	complete := 0
	for i, b := range sets {
		isPinned := strconv.FormatInt(b.Serial, 10) == pinned
		switch {
		case isPinned, b.Complete && complete < keep, !b.Complete && i == 0:
			if b.Complete && !isPinned {
				complete++
			}
			kept = append(kept, b)
		default:
			pruned = append(pruned, b)
		}
	}
	return kept, pruned
}

// DeleteBackup releases and deletes the Secrets of set b, found among
// secrets (its listing).
func (k Keeper) DeleteBackup(ctx context.Context, b state.Backup, secrets []corev1.Secret) error {
	for _, name := range b.Chunks {
		i := slices.IndexFunc(secrets, func(s corev1.Secret) bool { return s.Name == name })
		if name == "" || i < 0 {
			continue
		}
		if err := protection.Delete(ctx, k.Client, &secrets[i]); err != nil {
			return fmt.Errorf("pruning state backup: %w", err)
		}
	}
	return nil
}

// Listed is status.stateBackups of sets: the complete ones, newest first,
// at most MaxListedBackups.
func Listed(sets []state.Backup) []infrav1.StateBackup {
	var out []infrav1.StateBackup
	for _, b := range sets {
		if !b.Complete || len(out) == MaxListedBackups {
			continue
		}
		out = append(out, infrav1.StateBackup{Serial: b.Serial, TakenAt: metav1.NewTime(b.TakenAt), Bytes: b.Bytes})
	}
	return out
}

// BackupOf is the backup set of st, the state as read, its pieces with
// their data in secrets (by name), as a spec naming its suffix, serial,
// lineage, chunks in order and resource count; the caller adds where and
// when. taken: sets, the object's backup sets, hold this serial with the
// same content already (a restore writes a known serial), so there is
// nothing to write. Another set of the serial with other content makes
// the new one Disambiguate its name.
func BackupOf(st *state.State, secrets []corev1.Secret, sets []state.Backup, suffix string) (spec state.BackupSpec, taken bool) {
	byName := map[string]*corev1.Secret{}
	for i := range secrets {
		byName[secrets[i].Name] = &secrets[i]
	}
	chunks := make([][]byte, 0, len(st.Secrets))
	for _, ref := range st.Secrets {
		if s := byName[ref.Name]; s != nil {
			chunks = append(chunks, s.Data[state.DataKey])
		}
	}
	digest := state.BackupDigest(chunks)
	spec = state.BackupSpec{Suffix: suffix, Serial: st.Serial, Lineage: st.Lineage, Chunks: chunks, Resources: st.ManagedResources}
	for _, b := range sets {
		if b.Serial != st.Serial {
			continue
		}
		if b.Digest == digest {
			return spec, true
		}
		spec.Disambiguate = spec.Disambiguate || b.Name == state.BackupSetName(suffix, st.Serial)
	}
	return spec, false
}
