package state

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/klauspost/compress/gzip"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Limits on what the reader accepts. A kubernetes-backend Secret holds at
// most 1 MiB of compressed state, and real states compress 10–20×, so 32
// chunks and 64 MiB decompressed are far beyond any plausible cluster or
// machine state; beyond them the state is reported corrupt, not read.
const (
	MaxChunks     = 32
	MaxStateBytes = 64 << 20
)

// ChunkSize is the size of every piece but the last that Terraform (1.6 and
// later) cuts the compressed state into. The size is hard-coded in Terraform.
const ChunkSize = 1 << 20

// StateVersion is the only state format version CAPTF reads.
const StateVersion = 4

// maxDeflateRatio is the most deflate can expand its input; it bounds the
// buffer a forged gzip size field can make the reader allocate.
const maxDeflateRatio = 1032

// Decode reads a state from the Secrets the backend stores it in, as listed
// with Selector(suffix). It checks that they form a sequence, streams their
// data through gunzip within MaxChunks and MaxStateBytes, validates the JSON
// and decodes what State holds. Failures are an *Error:
//
//   - ReasonNotFound: no Secret.
//   - ReasonInconsistent: a gap, a duplicate, a missing base, a name that is
//     neither the base nor <base>-part-N, or a Secret without the tfstate
//     key.
//   - ReasonCorrupt: more than MaxChunks Secrets (checked before any data is
//     read), more than MaxStateBytes once decompressed (the read stops
//     there), bad or truncated gzip, invalid JSON, a version other than 4, or
//     a member CAPTF reads with the wrong JSON type.
//   - ReasonEncrypted: a top-level encryption_version, checked before the
//     version.
//
// Decompression stops at the end of the first gzip member, so a surplus
// chunk left behind while Terraform shrinks a state is ignored.
func Decode(suffix string, secrets []corev1.Secret) (*State, error) {
	st, _, err := decode(suffix, secrets, false, blockSize)
	return st, err
}

// DecodeRaw is Decode that also returns the decompressed state JSON, for a
// human to look at. The JSON holds every output value and attribute in
// clear: never log it.
func DecodeRaw(suffix string, secrets []corev1.Secret) (*State, []byte, error) {
	return decode(suffix, secrets, true, blockSize)
}

type chunk struct {
	index int
	ref   SecretRef
	data  []byte
}

func decode(suffix string, secrets []corev1.Secret, keepRaw bool, step int) (*State, []byte, error) {
	fp := Fingerprint(secrets)
	chunks, err := order(suffix, secrets)
	if err != nil {
		err.Fingerprint = fp
		return nil, nil, err
	}
	readers := make([]io.Reader, len(chunks))
	for i, c := range chunks {
		readers[i] = bytes.NewReader(c.data)
	}
	rawSize := 0
	if keepRaw {
		rawSize = sizeHint(chunks)
	}
	st, raw, err := decodeStream(io.MultiReader(readers...), step, keepRaw, rawSize)
	if err != nil {
		err.Fingerprint = fp
		return nil, nil, err
	}
	for _, c := range chunks {
		st.Secrets = append(st.Secrets, c.ref)
		st.CompressedBytes += int64(len(c.data))
	}
	st.Fingerprint = fp
	return st, raw, nil
}

// SecretMetadataList is an empty list of Secrets' metadata, for reads that
// must not transfer Secret data; MetadataOnly turns what it returns into
// Secrets.
func SecretMetadataList() *metav1.PartialObjectMetadataList {
	return &metav1.PartialObjectMetadataList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "SecretList"}}
}

// MetadataOnly turns what a metadata list returned into Secrets without
// data, for the callers that read names, labels and annotations alike.
func MetadataOnly(metas []metav1.PartialObjectMetadata) []corev1.Secret {
	secrets := make([]corev1.Secret, len(metas))
	for i := range metas {
		secrets[i].ObjectMeta = metas[i].ObjectMeta
	}
	return secrets
}

// Plausible checks, on the Secrets' metadata alone, what Decode checks
// before it reads any data: at most MaxChunks Secrets, each named as a
// piece of suffix's state. A reader that lists the metadata first fetches
// the data only of a plausible state, so that Secrets that merely carry a
// state's labels (a hundred of 1 MiB, say) cost it no memory. It returns
// nil or an *Error (ReasonCorrupt, ReasonInconsistent).
func Plausible[O any, PO interface {
	*O
	metav1.Object
}](suffix string, objs []O) error {
	if err := plausible[O, PO](suffix, objs); err != nil {
		err.Fingerprint = Fingerprint[O, PO](objs)
		return err
	}
	return nil
}

func plausible[O any, PO interface {
	*O
	metav1.Object
}](suffix string, objs []O) *Error {
	if len(objs) > MaxChunks {
		return corrupt("state has %d Secrets, more than the %d the reader accepts", len(objs), MaxChunks)
	}
	base := SecretName(suffix)
	for i := range objs {
		var o PO = &objs[i]
		if _, ok := chunkIndex(suffix, o.GetName()); !ok {
			return inconsistent("state Secret %s has an unexpected name: want %s or %s-part-<N>", o.GetName(), base, base)
		}
	}
	return nil
}

// order checks that the Secrets form the sequence base, -part-1, ...,
// -part-N and returns them in that order.
func order(suffix string, secrets []corev1.Secret) ([]chunk, *Error) {
	base := SecretName(suffix)
	if len(secrets) == 0 {
		return nil, &Error{Reason: ReasonNotFound, Message: fmt.Sprintf("no state Secret %s", base)}
	}
	if err := plausible[corev1.Secret](suffix, secrets); err != nil {
		return nil, err
	}
	chunks := make([]chunk, 0, len(secrets))
	for i := range secrets {
		sec := &secrets[i]
		index, _ := chunkIndex(suffix, sec.Name)
		data, ok := sec.Data[DataKey]
		if !ok {
			return nil, inconsistent("state Secret %s has no %q data key", sec.Name, DataKey)
		}
		chunks = append(chunks, chunk{
			index: index,
			ref:   SecretRef{Name: sec.Name, ResourceVersion: sec.ResourceVersion},
			data:  data,
		})
	}
	slices.SortFunc(chunks, func(a, b chunk) int { return a.index - b.index })
	for i, c := range chunks {
		switch {
		case i > 0 && c.index == chunks[i-1].index:
			return nil, inconsistent("state Secret %s appears twice", c.ref.Name)
		case c.index != i && i == 0:
			return nil, inconsistent("base state Secret %s is missing", base)
		case c.index != i:
			return nil, inconsistent("state Secret %s is missing", ChunkName(suffix, i))
		}
	}
	return chunks, nil
}

// sizeHint guesses the decompressed size from the gzip trailer at the end
// of the last piece, so that DecodeRaw allocates the JSON once at the right
// size. It is only a hint: the field is the size modulo 2^32, it may be
// forged, and while Terraform shrinks a state the last piece is surplus
// whose trailer tells the old size. So it is capped by what the compressed
// bytes can expand to, and a wrong hint costs memory or a copy, never
// correctness.
func sizeHint(chunks []chunk) int {
	var trailer [4]byte
	need, compressed := len(trailer), 0
	for i := len(chunks) - 1; i >= 0; i-- {
		data := chunks[i].data
		compressed += len(data)
		for j := len(data) - 1; j >= 0 && need > 0; j-- {
			need--
			trailer[need] = data[j]
		}
	}
	if need > 0 {
		return 0
	}
	hint := int(binary.LittleEndian.Uint32(trailer[:]))
	return min(hint, maxDeflateRatio*compressed, MaxStateBytes) + 1
}

// decodeStream gunzips r and scans the JSON while it is being gunzipped.
// With keepRaw it also returns the JSON, collected in a buffer of rawSize
// to start with.
func decodeStream(r io.Reader, size int, keepRaw bool, rawSize int) (*State, []byte, *Error) {
	// klauspost's inflater over a bufio.Reader, a source it has a
	// specialised decoder for, keeps ahead of the scanner and of
	// compress/gzip: the inflate is the read's critical path (see
	// docs/performance.md).
	zr, err := gzip.NewReader(bufio.NewReader(r))
	if err != nil {
		return nil, nil, gzipError(err)
	}
	// The surplus chunk of a shrinking state follows the first member.
	zr.Multistream(false)
	src := startInflate(io.LimitReader(zr, MaxStateBytes+1), size)
	defer src.stop()
	s := newScanner(src, keepRaw, rawSize)
	var d document
	if !s.document(&d) {
		if s.err == nil { // unreachable: every failed scan records why
			return nil, nil, corrupt("state could not be scanned")
		}
		return nil, nil, s.err
	}
	st, serr := d.state()
	if serr != nil {
		return nil, nil, serr
	}
	return st, s.raw, nil
}

// gzipError explains a gzip failure; gzip and flate errors name the
// problem, never the data.
func gzipError(err error) *Error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return corrupt("state gzip stream is truncated")
	}
	return corrupt("state is not valid gzip: %v", err)
}

// state checks encryption, version and types, in that order, and decodes
// the captured scalars.
func (d *document) state() (*State, *Error) {
	if d.encrypted {
		return nil, &Error{Reason: ReasonEncrypted,
			Message: "state is encrypted (OpenTofu state encryption), which CAPTF cannot read"}
	}
	if d.version == nil {
		return nil, corrupt("state has no version")
	}
	var version int64
	if err := json.Unmarshal(d.version, &version); err != nil {
		return nil, corrupt("unsupported state version: not an integer (want %d)", StateVersion)
	}
	if version != StateVersion {
		return nil, corrupt("unsupported state version %d (want %d)", version, StateVersion)
	}
	st := &State{Outputs: d.outputs, ManagedResources: d.managed}
	for _, m := range []struct {
		name string
		raw  json.RawMessage
		into any
	}{
		{"serial", d.serial, &st.Serial},
		{"lineage", d.lineage, &st.Lineage},
		{"terraform_version", d.runtime, &st.TerraformVersion},
	} {
		if m.raw != nil && json.Unmarshal(m.raw, m.into) != nil {
			d.mistyped(m.name)
		}
	}
	if d.wrongType != "" {
		return nil, corrupt("state member %q has the wrong JSON type", d.wrongType)
	}
	if st.Serial < 0 {
		return nil, corrupt("state serial is negative")
	}
	return st, nil
}
