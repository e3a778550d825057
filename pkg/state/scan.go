package state

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
)

// A JSON scanner that accepts exactly what encoding/json's Valid accepts
// (the tests and FuzzDecode compare them) at several times its speed: a
// state is mostly resource attributes that CAPTF skips, so skipping must
// keep pace with gunzip (BenchmarkScan32Chunks).
//
// It reads through a window over the decompressed stream: when a token runs
// into the end of the window, more input is appended and the part already
// consumed is dropped, so a token or a captured value is always contiguous.
// Indices into the window change when it moves: code holding one across a
// read (a captured value, a key) holds its absolute offset instead.

// maxDepth is encoding/json's nesting limit; deeper input is invalid.
const maxDepth = 10000

type scanner struct {
	b    []byte // the window: input from offset base on
	base int
	pos  int       // index into b of the next byte to read
	hold int       // absolute offset before which input may be dropped, or -1
	src  *inflater // nil once the input has ended
	raw  []byte    // all of the input, when the caller wants the JSON
	keep bool      // collect raw
	err  *Error    // first error; the scan stops there
}

func newScanner(src *inflater, keepRaw bool, rawSize int) *scanner {
	s := &scanner{src: src, hold: -1, keep: keepRaw}
	if keepRaw {
		s.raw = make([]byte, 0, rawSize)
	}
	return s
}

// syntaxError records an error found at the current position, unless an
// earlier one (or the stream's) is already there.
func (s *scanner) syntaxError(format string, args ...any) bool {
	if s.err == nil {
		s.err = corrupt("state is not valid JSON: %s at byte %d", fmt.Sprintf(format, args...), s.base+s.pos)
	}
	return false
}

// more appends the next block to the window; false at the end of input or
// after an error.
func (s *scanner) more() bool {
	if s.src == nil || s.err != nil {
		return false
	}
	blk := s.src.next()
	if blk.done || blk.err != nil {
		s.src = nil
	}
	switch {
	case errors.Is(blk.err, errTooLarge):
		s.err = corrupt("state exceeds %d MiB once decompressed", MaxStateBytes>>20)
		return false
	case blk.err != nil:
		s.err = gzipError(blk.err)
		return false
	}
	s.slide()
	s.b = append(s.b, blk.data...)
	if s.keep {
		s.raw = append(s.raw, blk.data...)
	}
	if s.src != nil {
		s.src.recycle(blk.data)
	}
	return len(blk.data) > 0
}

// slide drops the consumed part of the window, unless what is held would
// cost more to move than appending to the window: that keeps the copying
// linear even while a large value is captured.
func (s *scanner) slide() {
	drop := s.pos
	if s.hold >= 0 {
		drop = min(drop, s.hold-s.base)
	}
	if drop == 0 || len(s.b)-drop > drop {
		return
	}
	s.b = s.b[:copy(s.b, s.b[drop:])]
	s.base += drop
	s.pos -= drop
}

// refill waits for input past the window while a token that started at
// b[i] is read; it returns the window and i, which move, or nil at the end
// of input.
func (s *scanner) refill(i int) ([]byte, int) {
	s.pos = i
	if !s.more() {
		return nil, s.pos
	}
	return s.b, s.pos
}

// holdFrom keeps the input from the current position on in the window
// until release is called with the result; it returns the absolute offset
// of that position.
func (s *scanner) holdFrom() (at, prev int) {
	at, prev = s.base+s.pos, s.hold
	if prev < 0 || at < prev {
		s.hold = at
	}
	return at, prev
}

// held returns the window from absolute offset at to pos.
func (s *scanner) held(at int) []byte { return s.b[at-s.base : s.pos] }

func (s *scanner) release(prev int) { s.hold = prev }

// atEnd reports whether the input ended at pos (and ended cleanly).
func (s *scanner) atEnd() bool {
	for s.pos >= len(s.b) {
		if !s.more() {
			return s.err == nil
		}
	}
	return false
}

// peek returns the byte at pos, waiting for it if needed.
func (s *scanner) peek() (byte, bool) {
	for s.pos >= len(s.b) {
		if !s.more() {
			return 0, false
		}
	}
	return s.b[s.pos], true
}

var isSpace = [256]bool{' ': true, '\t': true, '\n': true, '\r': true}

// spaces8 is eight spaces.
const spaces8 = 0x2020202020202020

// spaceEnd returns the index of the first byte at or after i that is not
// whitespace, or len(b). A pretty-printed state is a third indentation, so
// runs of spaces are skipped a word at a time.
func spaceEnd(b []byte, i int) int {
	for i < len(b) {
		switch c := b[i]; {
		case c > ' ':
			return i
		case c == ' ' && i+8 <= len(b):
			if x := binary.LittleEndian.Uint64(b[i:]) ^ spaces8; x != 0 {
				i += bits.TrailingZeros64(x) >> 3
			} else {
				i += 8
			}
		case isSpace[c]:
			i++
		default:
			return i
		}
	}
	return i
}

func (s *scanner) skipSpace() {
	for {
		s.pos = spaceEnd(s.b, s.pos)
		if s.pos < len(s.b) || !s.more() {
			return
		}
	}
}

// next skips whitespace and returns the byte there; at the end of input it
// records an error.
func (s *scanner) next() (byte, bool) {
	s.skipSpace()
	c, ok := s.peek()
	if !ok {
		return 0, s.syntaxError("unexpected end")
	}
	return c, true
}

// expect consumes c after optional whitespace.
func (s *scanner) expect(c byte, what string) bool {
	got, ok := s.next()
	if !ok {
		return false
	}
	if got != c {
		return s.syntaxError("want %s", what)
	}
	s.pos++
	return true
}

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// skipString consumes a string; pos is at its opening quote.
func (s *scanner) skipString() bool {
	_, end, ok := s.scanString(s.b, s.pos)
	s.pos = end
	return ok
}

// scanString consumes the string whose opening quote is at b[i], waiting
// for input as needed; it returns the window, which may have moved, and
// the index after the closing quote in it.
func (s *scanner) scanString(b []byte, i int) ([]byte, int, bool) {
	i++
	for {
		j, st := stringEnd(b, i)
		switch st {
		case stringDone:
			return b, j, true
		case stringBad:
			s.pos = j
			if b[j] == '\\' {
				return b, j, s.syntaxError("invalid escape")
			}
			return b, j, s.syntaxError("control character in string")
		}
		if b, i = s.refill(j); b == nil {
			return s.b, i, s.syntaxError("unterminated string")
		}
	}
}

type stringStatus uint8

const (
	stringDone stringStatus = iota // the string ended
	stringMore                     // resume at the index once more input arrived
	stringBad                      // invalid at the index
)

// stringEnd scans string content from b[i] on, eight bytes at a time where
// it can: a byte is interesting if it is '"', '\\' or a control character,
// and the lowest flagged byte of a word is exact.
func stringEnd(b []byte, i int) (int, stringStatus) {
	for {
		for i+8 <= len(b) {
			x := binary.LittleEndian.Uint64(b[i:])
			q, e := x^('"'*ones), x^('\\'*ones)
			m := ((q - ones) &^ q) | ((e - ones) &^ e) | ((x - 0x20*ones) &^ x)
			if m &= highs; m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				goto found
			}
			i += 8
		}
		for i < len(b) && isPlain[b[i]] {
			i++
		}
	found:
		if i >= len(b) {
			return i, stringMore
		}
		switch b[i] {
		case '"':
			return i + 1, stringDone
		case '\\':
			if i+1 >= len(b) {
				return i, stringMore
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
				continue
			case 'u':
				if i+6 > len(b) {
					return i, stringMore
				}
				if isHex(b[i+2]) && isHex(b[i+3]) && isHex(b[i+4]) && isHex(b[i+5]) {
					i += 6
					continue
				}
			}
		}
		return i, stringBad
	}
}

// isPlain is true for bytes that stand for themselves inside a string.
var isPlain = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// numberEnd returns where the number at b[i:] ends and whether it is valid
// up to there: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func numberEnd(b []byte, i int) (int, bool) {
	digits := func() bool {
		start := i
		for i < len(b) && isDigit(b[i]) {
			i++
		}
		return i > start
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case !digits():
		return i, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if !digits() {
			return i, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if !digits() {
			return i, false
		}
	}
	return i, true
}

// skipLiteral consumes true, false or null.
func (s *scanner) skipLiteral(lit string) bool {
	_, end, ok := s.scanLiteral(s.b, s.pos, lit)
	s.pos = end
	return ok
}
