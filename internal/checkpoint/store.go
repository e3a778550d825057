package checkpoint

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The checkpoint Secrets' label, annotations and data key.
const (
	Label                 = "captf.io/checkpoint"
	GenerationAnnotation  = "captf.io/checkpoint-generation"
	ChunksAnnotation      = "captf.io/checkpoint-chunks"
	FingerprintAnnotation = "captf.io/checkpoint-fingerprint"
	DataKey               = "checkpoint.json.gz"
)

// ChunkBytes is the most of the compressed checkpoint one Secret holds,
// well inside a Secret's 1 MiB.
const ChunkBytes = 512 << 10

// MaxBytes bounds what Load decompresses.
const MaxBytes = 256 << 20

// ErrUnusable is a checkpoint Load will not answer: absent, written by
// another build or configuration, cut by a save that did not finish, or
// corrupt. The wrapped error says which.
var ErrUnusable = errors.New("no usable checkpoint")

// Store is one checkpoint.
type Store struct {
	// Client writes the Secrets; Reader reads them live.
	Client client.Client
	Reader client.Reader
	// Namespace is the manager's.
	Namespace string
	// Name names the checkpoint among the manager's (a label value).
	Name string
	// Fingerprint says which build and configuration wrote it: a
	// checkpoint of another fingerprint is never loaded.
	Fingerprint string
}

// prefix starts the name of each of the checkpoint's Secrets.
func (s Store) prefix() string { return "captf-checkpoint-" + s.Name + "-" }

// secretName is chunk i's Secret.
func (s Store) secretName(i int) string { return s.prefix() + strconv.Itoa(i) }

// index is the chunk index of one of the checkpoint's Secrets (-1: none).
func (s Store) index(name string) int {
	rest, ok := strings.CutPrefix(name, s.prefix())
	i, err := strconv.Atoi(rest)
	if !ok || err != nil || i < 0 || s.secretName(i) != name {
		return -1
	}
	return i
}

func (s Store) list(ctx context.Context) ([]corev1.Secret, error) {
	var list corev1.SecretList
	if err := s.Reader.List(ctx, &list, client.InNamespace(s.Namespace), client.MatchingLabels{Label: s.Name}); err != nil {
		return nil, fmt.Errorf("listing the checkpoint %s in namespace %s: %w", s.Name, s.Namespace, err)
	}
	return list.Items, nil
}

// Load returns the checkpoint's data. Anything but a whole checkpoint of
// this fingerprint is ErrUnusable; an error reading is returned as is.
func (s Store) Load(ctx context.Context) ([]byte, error) {
	items, err := s.list(ctx)
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return nil, fmt.Errorf("%w: none saved yet", ErrUnusable)
	}
	a := items[0].Annotations
	gen, fingerprint := a[GenerationAnnotation], a[FingerprintAnnotation]
	if fingerprint != s.Fingerprint {
		return nil, fmt.Errorf("%w: saved by another build or configuration of the manager", ErrUnusable)
	}
	n, err := strconv.Atoi(a[ChunksAnnotation])
	if err != nil || n < 1 || n > len(items) {
		return nil, fmt.Errorf("%w: %d of %s chunks saved", ErrUnusable, len(items), a[ChunksAnnotation])
	}
	chunks := make([][]byte, n)
	for _, it := range items {
		i := s.index(it.Name)
		if i < 0 || i >= n {
			continue // left by a larger save, deleted by the next one
		}
		if it.Annotations[GenerationAnnotation] != gen || it.Annotations[FingerprintAnnotation] != fingerprint || it.Annotations[ChunksAnnotation] != a[ChunksAnnotation] {
			return nil, fmt.Errorf("%w: chunks of two saves (one did not finish)", ErrUnusable)
		}
		chunks[i] = it.Data[DataKey]
	}
	for i, c := range chunks {
		if c == nil {
			return nil, fmt.Errorf("%w: chunk %d is missing", ErrUnusable, i)
		}
	}
	zr, err := gzip.NewReader(bytes.NewReader(bytes.Join(chunks, nil)))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnusable, err)
	}
	data, err := io.ReadAll(io.LimitReader(zr, MaxBytes+1))
	if err == nil && len(data) > MaxBytes {
		err = fmt.Errorf("larger than %d bytes", MaxBytes)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnusable, err)
	}
	return data, nil
}

// Save replaces the checkpoint with data: every chunk of a new generation
// first, then the chunks it no longer uses go.
func (s Store) Save(ctx context.Context, data []byte) error {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(data); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	z := buf.Bytes()
	var chunks [][]byte
	for len(z) > ChunkBytes {
		chunks, z = append(chunks, z[:ChunkBytes]), z[ChunkBytes:]
	}
	chunks = append(chunks, z)
	ann := map[string]string{
		GenerationAnnotation:  strconv.FormatInt(time.Now().UnixNano(), 36),
		ChunksAnnotation:      strconv.Itoa(len(chunks)),
		FingerprintAnnotation: s.Fingerprint,
	}
	for i, c := range chunks {
		if err := s.put(ctx, i, c, ann); err != nil {
			return err
		}
	}
	var names metav1.PartialObjectMetadataList
	names.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("SecretList"))
	if err := s.Reader.List(ctx, &names, client.InNamespace(s.Namespace), client.MatchingLabels{Label: s.Name}); err != nil {
		return fmt.Errorf("listing the checkpoint %s in namespace %s: %w", s.Name, s.Namespace, err)
	}
	for _, it := range names.Items {
		if s.index(it.Name) < len(chunks) {
			continue
		}
		unused := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: it.Namespace, Name: it.Name}}
		if err := s.Client.Delete(ctx, unused); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting the checkpoint's unused Secret %s: %w", it.Name, err)
		}
	}
	return nil
}

// put replaces chunk i, or creates it: an update without a
// resourceVersion, as the checkpoint has one writer (the leader) and its
// generations tell a mixed save.
func (s Store) put(ctx context.Context, i int, data []byte, ann map[string]string) error {
	want := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: s.secretName(i),
		Labels: map[string]string{Label: s.Name}, Annotations: ann}, Type: corev1.SecretTypeOpaque, Data: map[string][]byte{DataKey: data}}
	err := s.Client.Update(ctx, want.DeepCopy())
	if apierrors.IsNotFound(err) {
		err = s.Client.Create(ctx, want)
	}
	if err != nil {
		return fmt.Errorf("saving the checkpoint's Secret %s/%s: %w", want.Namespace, want.Name, err)
	}
	return nil
}
