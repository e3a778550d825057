package runner

import "sync"

// StderrTailBytes is how much of a step's stderr the runner keeps in memory
// to build the failure summary. The pod log always gets all of it.
const StderrTailBytes = 64 << 10

// TailBuffer is an io.Writer that keeps only the last Limit bytes written
// to it, so that a step printing without end costs bounded memory. It is
// safe for concurrent use: a step's output may be read while it still
// runs. The zero value keeps nothing; use NewTailBuffer.
type TailBuffer struct {
	mu      sync.Mutex
	limit   int
	buf     []byte // grows up to limit, then is reused as a ring
	start   int    // index of the oldest byte once the ring is full
	dropped int64  // bytes written but no longer held
}

// NewTailBuffer returns a TailBuffer keeping the last limit bytes. Memory
// grows with what is written, up to limit.
func NewTailBuffer(limit int) *TailBuffer {
	return &TailBuffer{limit: max(limit, 0)}
}

// Write keeps the tail of p. It never fails.
func (t *TailBuffer) Write(p []byte) (int, error) {
	n := len(p)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.limit == 0 {
		t.dropped += int64(n)
		return n, nil
	}
	if len(p) > t.limit {
		t.dropped += int64(len(p) - t.limit)
		p = p[len(p)-t.limit:]
	}
	// Fill the buffer up to its limit first.
	if room := t.limit - len(t.buf); room > 0 {
		k := min(room, len(p))
		t.buf = append(t.buf, p[:k]...)
		p = p[k:]
	}
	// Then overwrite the oldest bytes, wrapping around.
	for len(p) > 0 {
		k := copy(t.buf[t.start:], p)
		t.dropped += int64(k)
		p = p[k:]
		t.start = (t.start + k) % t.limit
	}
	return n, nil
}

// Bytes returns a copy of the bytes held, oldest first.
func (t *TailBuffer) Bytes() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]byte, 0, len(t.buf))
	out = append(out, t.buf[t.start:]...)
	return append(out, t.buf[:t.start]...)
}

// Truncated reports whether older bytes were discarded, in which case the
// first line Bytes returns is probably cut.
func (t *TailBuffer) Truncated() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.dropped > 0
}
