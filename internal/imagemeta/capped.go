package imagemeta

import (
	"errors"
	"io"
	"net/http"
)

// Caps on what one read takes from a registry: a manifest or index, and
// the config blob whose labels are read. A registry cannot make the
// manager hold more.
const (
	maxBody   = 4 << 20
	maxConfig = 1 << 20
)

// errTooLarge is a registry response past maxBody.
var errTooLarge = errors.New("the registry's response is larger than the 4 MiB a manifest or config may take")

// capped cuts every response body at maxBody.
type capped struct{ next http.RoundTripper }

func (c capped) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.next.RoundTrip(r)
	if err == nil && resp.Body != nil {
		resp.Body = &cappedBody{ReadCloser: resp.Body, left: maxBody}
	}
	return resp, err
}

type cappedBody struct {
	io.ReadCloser
	left int64
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, errTooLarge
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		return 0, errTooLarge
	}
	return n, err
}
