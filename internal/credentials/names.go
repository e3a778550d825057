package credentials

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"sort"
)

// mirrorPrefix starts the name of every mirror Secret.
const mirrorPrefix = "captf-creds-"

// maxNameLength is the longest name a Secret may have.
const maxNameLength = 253

// MirrorName returns the name of the mirror Secret of an identity:
// captf-creds-<identity>, or captf-creds- and the first 16 hex characters of
// the SHA-256 of the identity's name when the full name would exceed 253
// characters.
func MirrorName(identity string) string {
	name := mirrorPrefix + identity
	if len(name) <= maxNameLength {
		return name
	}
	sum := sha256.Sum256([]byte(identity))
	return mirrorPrefix + hex.EncodeToString(sum[:])[:16]
}

// SourceHash returns the hex SHA-256 of a Secret's data. Keys are taken in
// sorted order, and every key and value is preceded by its length as eight
// big-endian bytes, so that no two different maps hash alike by moving a
// boundary between a key and its value.
func SourceHash(data map[string][]byte) string {
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	h := sha256.New()
	var n [8]byte
	for _, k := range keys {
		binary.BigEndian.PutUint64(n[:], uint64(len(k)))
		h.Write(n[:])
		h.Write([]byte(k))
		v := data[k]
		binary.BigEndian.PutUint64(n[:], uint64(len(v)))
		h.Write(n[:])
		h.Write(v)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// MissingKeys returns the keys of required that data lacks, sorted; a key
// with an empty value counts as present. The identity controller and
// EnsureMirror report them with CredentialsIncomplete.
func MissingKeys(required []string, data map[string][]byte) []string {
	var missing []string
	for _, k := range required {
		if _, ok := data[k]; !ok {
			missing = append(missing, k)
		}
	}
	sort.Strings(missing)
	return missing
}
