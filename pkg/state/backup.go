package state

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
)

// A state backup set is a copy of an object's compressed state in 1 to
// MaxChunks Secrets: the base captf-state-backup-<suffix>-<serial> (with
// -<digest8> when another set already holds that name) and its pieces
// <base>-part-<N>. Each piece carries the set's annotations; the restore
// operation pushes a complete set back as the object's state.

// BackupSpec describes a backup set to write.
type BackupSpec struct {
	Suffix    string
	Namespace string
	Serial    int64
	Lineage   string
	// Chunks are the compressed state's pieces, each at most ChunkSize.
	Chunks [][]byte
	// Resources is the state's managed resource count.
	Resources int
	// InputsHash is the state's inputs hash ("" when none), recorded on the
	// base Secret.
	InputsHash string
	// Labels are the object's backend labels (OwnerLabels).
	Labels    map[string]string
	TakenAt   time.Time
	SourceJob string
	// Origin marks a set that is not a copy of the stored state.
	Origin string
	// Disambiguate appends the digest's first 8 hex characters to the
	// name: another set of the same serial holds other content.
	Disambiguate bool
}

// BackupSetName is the base name of a backup set.
func BackupSetName(suffix string, serial int64) string {
	return fmt.Sprintf("captf-state-backup-%s-%d", suffix, serial)
}

// BackupDigest is the hex SHA-256 of a set's concatenated pieces.
func BackupDigest(chunks [][]byte) string {
	h := sha256.New()
	for _, c := range chunks {
		h.Write(c)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// NewBackupSet returns the Secrets of a backup set, base first. Create
// them in reverse order: a set whose base exists is complete.
func NewBackupSet(b BackupSpec) []corev1.Secret {
	digest := BackupDigest(b.Chunks)
	base := BackupSetName(b.Suffix, b.Serial)
	if b.Disambiguate {
		base += "-" + digest[:8]
	}
	out := make([]corev1.Secret, 0, len(b.Chunks))
	for i, part := range b.Chunks {
		name := base
		if i > 0 {
			name = fmt.Sprintf("%s-part-%d", base, i)
		}
		ann := map[string]string{
			infrav1.StateBackupSerialAnnotation:    strconv.FormatInt(b.Serial, 10),
			infrav1.StateBackupLineageAnnotation:   b.Lineage,
			infrav1.StateBackupTakenAtAnnotation:   b.TakenAt.UTC().Format(time.RFC3339),
			infrav1.StateBackupDigestAnnotation:    digest,
			infrav1.StateBackupResourcesAnnotation: strconv.Itoa(b.Resources),
			infrav1.StateBackupSetAnnotation:       base,
			infrav1.StateBackupChunkAnnotation:     strconv.Itoa(i),
			infrav1.StateBackupChunksAnnotation:    strconv.Itoa(len(b.Chunks)),
			infrav1.StateBackupBytesAnnotation:     strconv.Itoa(len(part)),
		}
		if b.SourceJob != "" {
			ann[infrav1.StateBackupSourceJobAnnotation] = b.SourceJob
		}
		if b.Origin != "" {
			ann[infrav1.StateBackupOriginAnnotation] = b.Origin
		}
		if i == 0 && b.InputsHash != "" {
			ann[infrav1.InputsHashAnnotation] = b.InputsHash
		}
		labels := map[string]string{infrav1.StateBackupLabel: "true", infrav1.StateBackupSuffixLabel: b.Suffix}
		for k, v := range b.Labels {
			labels[k] = v
		}
		out = append(out, corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: b.Namespace, Labels: labels, Annotations: ann},
			Type:       corev1.SecretTypeOpaque,
			Data:       map[string][]byte{DataKey: part},
		})
	}
	return out
}

// Backup is one backup set found among Secrets.
type Backup struct {
	// Name is the set's base name.
	Name       string
	Serial     int64
	TakenAt    time.Time
	Digest     string
	Resources  int
	InputsHash string
	// Bytes is the compressed size summed over the pieces present.
	Bytes int64
	// Chunks are the pieces' Secret names in chunk order ("" for a piece
	// that is missing).
	Chunks []string
	// Complete: 1 to MaxChunks pieces, all present, serial at least 1.
	Complete bool
}

// Backups groups backup Secrets (for example those labelled
// captf.io/state-backup-suffix=<suffix>) into sets, newest first (by
// serial, then time taken). Only metadata is read, and the size from the
// data when present, else from each piece's captf.io/state-backup-bytes
// (0 for a piece written before CAPTF recorded it).
func Backups(secrets []corev1.Secret) []Backup {
	sets := map[string]*Backup{}
	var order []string
	for i := range secrets {
		s := &secrets[i]
		a := s.Annotations
		set := a[infrav1.StateBackupSetAnnotation]
		if set == "" {
			continue
		}
		b, ok := sets[set]
		if !ok {
			n, _ := strconv.Atoi(a[infrav1.StateBackupChunksAnnotation])
			if n < 1 || n > MaxChunks {
				n = 0
			}
			b = &Backup{Name: set, Chunks: make([]string, n)}
			b.Serial, _ = strconv.ParseInt(a[infrav1.StateBackupSerialAnnotation], 10, 64)
			b.TakenAt, _ = time.Parse(time.RFC3339, a[infrav1.StateBackupTakenAtAnnotation])
			b.Digest = a[infrav1.StateBackupDigestAnnotation]
			b.Resources, _ = strconv.Atoi(a[infrav1.StateBackupResourcesAnnotation])
			sets[set] = b
			order = append(order, set)
		}
		idx, err := strconv.Atoi(a[infrav1.StateBackupChunkAnnotation])
		if err != nil || idx < 0 || idx >= len(b.Chunks) {
			continue
		}
		b.Chunks[idx] = s.Name
		if data, ok := s.Data[DataKey]; ok {
			b.Bytes += int64(len(data))
		} else {
			n, _ := strconv.ParseInt(a[infrav1.StateBackupBytesAnnotation], 10, 64)
			b.Bytes += max(n, 0)
		}
		if idx == 0 {
			b.InputsHash = a[infrav1.InputsHashAnnotation]
		}
	}
	out := make([]Backup, 0, len(order))
	for _, name := range order {
		b := sets[name]
		b.Complete = len(b.Chunks) > 0 && b.Serial >= 1
		for _, c := range b.Chunks {
			b.Complete = b.Complete && c != ""
		}
		out = append(out, *b)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Serial != out[j].Serial {
			return out[i].Serial > out[j].Serial
		}
		return out[i].TakenAt.After(out[j].TakenAt)
	})
	return out
}
