package runner

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/pkg/state"
)

// ErroredStateFile is where a runtime writes the state it could not save to
// its backend, in its working directory.
const ErroredStateFile = "errored.tfstate"

// backupOriginErrored marks a backup set saved from errored.tfstate.
const backupOriginErrored = "errored-state"

// backend is what the runner knows of the object's backend from the
// --backend-config values.
type backend struct {
	namespace, suffix string
	labels            map[string]string
	configPath        string
	inCluster         bool
}

func parseBackend(values []string) (backend, error) {
	var b backend
	for _, v := range values {
		key, value, _ := strings.Cut(v, "=")
		switch key {
		case "namespace":
			b.namespace = value
		case "secret_suffix":
			b.suffix = value
		case "config_path":
			b.configPath = value
		case "in_cluster_config":
			b.inCluster = value == "true"
		case "labels":
			labels, err := parseHCLMap(value)
			if err != nil {
				return b, fmt.Errorf("backend labels: %w", err)
			}
			b.labels = labels
		}
	}
	if b.namespace == "" || b.suffix == "" {
		return b, errors.New("the backend config names no namespace or secret_suffix")
	}
	return b, nil
}

// restConfig reaches the API server the way the backend does.
func (b backend) restConfig() (*rest.Config, error) {
	switch {
	case b.configPath != "":
		return clientcmd.BuildConfigFromFlags("", b.configPath)
	case b.inCluster:
		return rest.InClusterConfig()
	}
	return nil, errors.New("the backend config has neither config_path nor in_cluster_config")
}

func (b backend) client() (corev1client.SecretsGetter, error) {
	cfg, err := b.restConfig()
	if err != nil {
		return nil, err
	}
	return corev1client.NewForConfig(cfg)
}

// rescueErroredState saves the state a runtime wrote to errored.tfstate
// because its backend rejected it (OpenTofu cannot split a state over 1 MiB
// compressed across Secrets): without this it would die with the pod, and
// with it the record of what the apply created. The state is saved as a
// state backup set, gzip cut into 1 MiB pieces, which the restore operation
// pushes back once the object runs a runtime that can store it.
func rescueErroredState(ctx context.Context, root string, backendConfig []string) (*Rescue, error) {
	raw, err := os.ReadFile(filepath.Join(root, ErroredStateFile))
	if err != nil {
		return nil, err
	}
	var head struct {
		Version int    `json:"version"`
		Serial  int64  `json:"serial"`
		Lineage string `json:"lineage"`
	}
	if err := json.Unmarshal(raw, &head); err != nil || head.Version != state.StateVersion {
		return nil, errors.New("errored.tfstate is not a version 4 state")
	}
	b, err := parseBackend(backendConfig)
	if err != nil {
		return nil, err
	}
	c, err := b.client()
	if err != nil {
		return nil, fmt.Errorf("reaching the API server: %w", err)
	}
	var gz bytes.Buffer
	w, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	_, _ = w.Write(raw)
	if err := w.Close(); err != nil {
		return nil, err
	}
	payload := gz.Bytes()
	chunks := (len(payload) + state.ChunkSize - 1) / state.ChunkSize
	if chunks > state.MaxChunks {
		return nil, fmt.Errorf("the state needs %d Secrets, more than %d", chunks, state.MaxChunks)
	}
	pieces := make([][]byte, 0, chunks)
	for i := range chunks {
		pieces = append(pieces, payload[i*state.ChunkSize:min((i+1)*state.ChunkSize, len(payload))])
	}
	spec := state.BackupSpec{Suffix: b.suffix, Namespace: b.namespace, Serial: head.Serial, Lineage: head.Lineage,
		Chunks: pieces, Resources: countManaged(raw), Labels: b.labels, TakenAt: time.Now(), Origin: backupOriginErrored}
	spec.SourceJob, _ = os.Hostname()
	digest := state.BackupDigest(pieces)
	if exists, err := differentSet(ctx, c, b.namespace, state.BackupSetName(b.suffix, head.Serial), digest); err != nil {
		return nil, err
	} else if exists {
		spec.Disambiguate = true
	}
	set := state.NewBackupSet(spec)
	base := set[0].Name
	// The base Secret is written last: a set whose base exists is complete.
	for i := len(set) - 1; i >= 0; i-- {
		sec := &set[i]
		err := retrying(ctx, func(ctx context.Context) error {
			_, err := c.Secrets(b.namespace).Create(ctx, sec, metav1.CreateOptions{})
			return err
		})
		if apierrors.IsAlreadyExists(err) {
			// A retried rescue finds its own pieces; anything else is not ours.
			other, getErr := differentSet(ctx, c, b.namespace, sec.Name, digest)
			switch {
			case getErr != nil:
				return nil, fmt.Errorf("saving %s: it exists and cannot be read back: %w", sec.Name, getErr)
			case other:
				return nil, fmt.Errorf("saving %s: a different backup holds the name", sec.Name)
			}
			err = nil
		}
		if err != nil {
			return nil, fmt.Errorf("saving %s: %w", sec.Name, err)
		}
	}
	return &Rescue{Backup: base, Serial: head.Serial, Chunks: chunks}, nil
}

// The rescue's calls are tried again while they fail transiently, each
// attempt bounded (a request hung on an overloaded server must not take
// the whole budget), waiting from rescueFirstWait doubling up to
// rescueMaxWait in between, until the rescue's context ends.
const (
	rescueAttemptTimeout = 30 * time.Second
	rescueFirstWait      = 500 * time.Millisecond
	rescueMaxWait        = 15 * time.Second
)

// retrying calls fn until it succeeds, fails for good (see transient), or
// ctx ends; it returns fn's last error.
func retrying(ctx context.Context, fn func(context.Context) error) error {
	delay := rescueFirstWait
	for {
		attempt, cancel := context.WithTimeout(ctx, rescueAttemptTimeout)
		err := fn(attempt)
		cancel()
		if err == nil || !transient(err) || ctx.Err() != nil {
			return err
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		delay = min(2*delay, rescueMaxWait)
	}
}

// transient reports whether a failed write may succeed if tried again: the
// API server was overloaded, timed out or the connection broke. An attempt
// that did reach the server before the connection broke finds its piece
// already there on the next try, which the caller accepts.
func transient(err error) bool {
	switch {
	case apierrors.IsServerTimeout(err), apierrors.IsTimeout(err), apierrors.IsTooManyRequests(err),
		apierrors.IsInternalError(err), apierrors.IsServiceUnavailable(err), apierrors.IsUnexpectedServerError(err):
		return true
	}
	// Any other answer from the server (AlreadyExists, Invalid, Forbidden,
	// NotFound, ...) is final; anything that is no answer is the connection.
	var status apierrors.APIStatus
	return !errors.As(err, &status)
}

// differentSet reports whether a backup set of that name holds other content.
func differentSet(ctx context.Context, c corev1client.SecretsGetter, namespace, name, digest string) (bool, error) {
	var existing *corev1.Secret
	err := retrying(ctx, func(ctx context.Context) error {
		var err error
		existing, err = c.Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
		return err
	})
	switch {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, err
	}
	return existing.Annotations[infrav1.StateBackupDigestAnnotation] != digest, nil
}

// countManaged counts the state's managed resources (a resource block with
// count or for_each counts once).
func countManaged(raw []byte) int {
	var s struct {
		Resources []struct {
			Mode string `json:"mode"`
		} `json:"resources"`
	}
	if json.Unmarshal(raw, &s) != nil {
		return 0
	}
	n := 0
	for _, r := range s.Resources {
		if r.Mode == "managed" {
			n++
		}
	}
	return n
}
