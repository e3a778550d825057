package guard

import (
	"captf.io/captf/internal/inputs"
	"captf.io/captf/internal/records"
)

// Keying keys stored hashes with the object's plan key.
type Keying struct {
	// Key is the object's plan key (nil while it has none).
	Key []byte
	// Ephemeral: the key is this pass's only (a deleting object in a
	// namespace being deleted, which takes no new Secret).
	Ephemeral bool
}

// Keyed is a stored inputs or approval hash in the current scheme (an h2
// digest of an earlier release is rekeyed), for comparing with the
// current ones and for writing. Under an ephemeral key an h2 digest is
// dropped: keyed with it, it would be written where nothing could ever
// match it again, and as it is, it confirms guesses.
func (k Keying) Keyed(stored string) string {
	keyed := inputs.Rekey(k.Key, stored)
	if k.Ephemeral && keyed != stored {
		return ""
	}
	return keyed
}

// Record is a copy of rec with its inputs hash keyed (nil for nil).
func (k Keying) Record(rec *records.Record) *records.Record {
	if rec == nil {
		return nil
	}
	c := *rec
	c.InputsHash = k.Keyed(c.InputsHash)
	return &c
}
