package custody

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"captf.io/captf/internal/roles"
	"captf.io/captf/pkg/state"
)

// States remembers, per object UID, the newest state decoded of its state
// Secrets, or the refusal they gave: a pass whose state Secrets have the
// same names and resourceVersions reuses it instead of transferring and
// decompressing them again. The zero value is ready; it is safe for
// concurrent use.
type States struct {
	known sync.Map
	// decodes counts state decompressions (for tests and benchmarks).
	decodes atomic.Int64
}

// ErrStateMoved: a pass read the state while another pass of it stored
// an older read; the pass is retried.
var ErrStateMoved = errors.New("the state Secrets' remembered read was replaced while they were listed; reading again")

// Decodes returns how many states were decompressed.
func (s *States) Decodes() int64 { return s.decodes.Load() }

// Forget forgets the state of uid (its object is gone).
func (s *States) Forget(uid types.UID) { s.known.Delete(uid) }

// List reads the state Secrets of the object uid live, through reader:
// their metadata first, and their data only when their names or
// resourceVersions changed since the object's last decode and they are a
// plausible state (state.Plausible), so that an idle pass transfers no
// state and Secrets that merely carry the state's labels cost no memory.
// withData says whether the Secrets carry their data; without it, Decode
// answers from what it remembers of these Secrets.
func (s *States) List(ctx context.Context, reader client.Reader, uid types.UID, namespace, suffix string) (secrets []corev1.Secret, withData bool, err error) {
	metas := state.SecretMetadataList()
	if err := reader.List(ctx, metas, client.InNamespace(namespace), client.MatchingLabelsSelector{Selector: state.Selector(suffix)}); err != nil {
		return nil, false, fmt.Errorf("listing the state Secrets: %w", err)
	}
	secrets = state.MetadataOnly(metas.Items)
	if len(metas.Items) == 0 {
		return secrets, true, nil
	}
	if _, known := s.decoded(uid, state.Fingerprint(metas.Items)); known {
		return secrets, false, nil
	}
	if err := state.Plausible(suffix, metas.Items); err != nil {
		s.known.Store(uid, err) // refused on its metadata: Decode answers with it
		return secrets, false, nil
	}
	if secrets, err = roles.ListStateData(ctx, reader, namespace, state.Selector(suffix)); err != nil {
		return nil, false, fmt.Errorf("listing the state Secrets: %w", err)
	}
	return secrets, true, nil
}

// Decode decodes a state, or answers as it did last for uid when its
// Secrets did not change since: the state decoded then, or the error, so
// that a state that cannot be read is not fetched and decoded again at
// every pass. Secrets listed without their data that it no longer knows
// (another pass of the state stored an older read meanwhile) give
// ErrStateMoved.
func (s *States) Decode(uid types.UID, suffix string, secrets []corev1.Secret, withData bool) (*state.State, error) {
	if len(secrets) == 0 {
		return state.Decode(suffix, secrets)
	}
	fp := state.Fingerprint(secrets)
	if known, ok := s.decoded(uid, fp); ok {
		if st, isState := known.(*state.State); isState {
			return st, nil
		}
		return nil, known.(error)
	}
	if !withData {
		// Listed without data because they were known, and forgotten
		// since: read again rather than take their metadata for a state.
		return nil, ErrStateMoved
	}
	st, err := state.Decode(suffix, secrets)
	s.decodes.Add(1)
	if err != nil {
		var refused *state.Error
		if errors.As(err, &refused) {
			s.known.Store(uid, refused)
		}
		return nil, err
	}
	s.known.Store(uid, st)
	return st, nil
}

// decoded is what s remembers of uid's state Secrets of fingerprint fp: a
// *state.State, or the *state.Error they gave.
func (s *States) decoded(uid types.UID, fp string) (any, bool) {
	known, ok := s.known.Load(uid)
	if !ok {
		return nil, false
	}
	switch v := known.(type) {
	case *state.State:
		return v, v.Fingerprint == fp
	case *state.Error:
		return v, v.Fingerprint == fp
	}
	return nil, false
}
