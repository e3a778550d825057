package runner

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
)

func TestTailBuffer(t *testing.T) {
	testCases := []struct {
		name          string
		limit         int
		writes        []string
		want          string
		wantTruncated bool
	}{
		{name: "nothing written", limit: 8, want: ""},
		{name: "under the limit keeps everything", limit: 8, writes: []string{"abc", "de"}, want: "abcde"},
		{name: "exactly the limit", limit: 8, writes: []string{"abcd", "efgh"}, want: "abcdefgh"},
		{name: "wraps around keeping the newest bytes", limit: 8, writes: []string{"abcdef", "ghij"}, want: "cdefghij", wantTruncated: true},
		{name: "many small writes", limit: 4, writes: []string{"a", "b", "c", "d", "e", "f", "g"}, want: "defg", wantTruncated: true},
		{name: "one write larger than the limit", limit: 4, writes: []string{"ab", "0123456789"}, want: "6789", wantTruncated: true},
		{name: "wrap exactly at the end of the ring", limit: 4, writes: []string{"abcd", "efgh", "ij"}, want: "ghij", wantTruncated: true},
		{name: "zero limit keeps nothing", limit: 0, writes: []string{"abc"}, want: "", wantTruncated: true},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			tb := NewTailBuffer(tc.limit)
			for _, w := range tc.writes {
				n, err := tb.Write([]byte(w))
				if n != len(w) || err != nil {
					t.Fatalf("Write(%q) = %d, %v", w, n, err)
				}
			}
			if got := string(tb.Bytes()); got != tc.want {
				t.Errorf("Bytes() = %q, want %q", got, tc.want)
			}
			if got := tb.Truncated(); got != tc.wantTruncated {
				t.Errorf("Truncated() = %v, want %v", got, tc.wantTruncated)
			}
		})
	}
}

// TestTailBufferMatchesSuffix checks the ring against the obvious answer,
// the last limit bytes of everything written, for uneven write sizes.
func TestTailBufferMatchesSuffix(t *testing.T) {
	for _, limit := range []int{1, 7, 64, 1000} {
		t.Run(fmt.Sprint(limit), func(t *testing.T) {
			tb := NewTailBuffer(limit)
			var all bytes.Buffer
			for i := range 300 {
				chunk := bytes.Repeat([]byte{byte('a' + i%26)}, i%37)
				chunk = append(chunk, fmt.Sprintf("<%d>", i)...)
				all.Write(chunk)
				_, _ = tb.Write(chunk)
			}
			want := all.Bytes()[all.Len()-limit:]
			if got := tb.Bytes(); !bytes.Equal(got, want) {
				t.Errorf("tail differs:\n got %q\nwant %q", got, want)
			}
		})
	}
}

func TestTailBufferBoundsMemory(t *testing.T) {
	tb := NewTailBuffer(StderrTailBytes)
	line := strings.Repeat("x", 1023) + "\n"
	for range 1000 { // ~1 MiB
		_, _ = io.WriteString(tb, line)
	}
	if got := len(tb.Bytes()); got != StderrTailBytes {
		t.Errorf("held %d bytes, want %d", got, StderrTailBytes)
	}
	if cap(tb.buf) > StderrTailBytes*2 {
		t.Errorf("buffer capacity %d grew past the limit", cap(tb.buf))
	}
}

func TestTailBufferConcurrentWrites(t *testing.T) {
	tb := NewTailBuffer(100)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 1000 {
				_, _ = tb.Write([]byte("0123456789"))
			}
		})
	}
	wg.Wait()
	// Writes of 10 bytes into a 100-byte ring stay aligned when serialised.
	if got := string(tb.Bytes()); got != strings.Repeat("0123456789", 10) {
		t.Errorf("interleaved writes corrupted the tail: %q", got)
	}
}
