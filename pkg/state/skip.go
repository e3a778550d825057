package state

// Where skipValue is after each token.
const (
	wantValue      = iota // a value
	wantFirstValue        // a value or ']', just after '['
	wantFirstKey          // a key or '}', just after '{'
	wantKey               // a key, after ','
	wantColon             // ':' after a key
	afterValue            // ',' or the closer, or done at the top
)

// skipValue consumes one value after optional whitespace, validating it.
// depth is the nesting depth of the container holding it. Most of a state
// goes through here, so it is one loop over local variables, with nesting
// on an explicit stack: deeply nested input must not grow the goroutine
// stack either.
func (s *scanner) skipValue(depth int) bool {
	var stack [64]byte
	closers := stack[:0]
	b, i := s.b, s.pos
	state := wantValue
	for {
		if state == afterValue && len(closers) == 0 {
			s.pos = i
			return true
		}
		if i = spaceEnd(b, i); i == len(b) {
			if b, i = s.refill(i); b == nil {
				return s.syntaxError("unexpected end")
			}
			continue
		}
		c := b[i]
		switch state {
		case afterValue:
			closer := closers[len(closers)-1]
			switch {
			case c == closer:
				closers = closers[:len(closers)-1]
			case c != ',':
				s.pos = i
				return s.syntaxError("want ',' or '%c'", closer)
			case closer == '}':
				state = wantKey
			default:
				state = wantValue
			}
			i++
			continue
		case wantColon:
			if c != ':' {
				s.pos = i
				return s.syntaxError("want ':'")
			}
			i++
			state = wantValue
			continue
		case wantFirstValue, wantFirstKey:
			if c == closers[len(closers)-1] {
				closers = closers[:len(closers)-1]
				i++
				state = afterValue
				continue
			}
		}
		if state == wantKey || state == wantFirstKey {
			if c != '"' {
				s.pos = i
				return s.syntaxError("want object key")
			}
			var ok bool
			if b, i, ok = s.scanString(b, i); !ok {
				return false
			}
			state = wantColon
			if i < len(b) && b[i] == ':' { // as the runtimes write it
				i++
				state = wantValue
			}
			continue
		}

		var ok bool
		switch c {
		case '{', '[':
			if depth+len(closers)+1 > maxDepth {
				s.pos = i
				return s.syntaxError("nesting deeper than %d", maxDepth)
			}
			closers, state = append(closers, c+2), wantFirstValue // ']' is '['+2, '}' is '{'+2
			if c == '{' {
				state = wantFirstKey
			}
			i++
			continue
		case '"':
			b, i, ok = s.scanString(b, i)
		case 't':
			b, i, ok = s.scanLiteral(b, i, "true")
		case 'f':
			b, i, ok = s.scanLiteral(b, i, "false")
		case 'n':
			b, i, ok = s.scanLiteral(b, i, "null")
		case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
			b, i, ok = s.scanNumber(b, i)
		default:
			s.pos = i
			return s.syntaxError("invalid value")
		}
		if !ok {
			return false
		}
		state = afterValue
	}
}

// scanLiteral consumes lit at b[i], waiting for input as needed.
func (s *scanner) scanLiteral(b []byte, i int, lit string) ([]byte, int, bool) {
	for len(b)-i < len(lit) {
		if b, i = s.refill(i); b == nil {
			return s.b, i, s.syntaxError("invalid literal")
		}
	}
	if string(b[i:i+len(lit)]) != lit {
		s.pos = i
		return b, i, s.syntaxError("invalid literal")
	}
	return b, i + len(lit), true
}

// scanNumber consumes the number at b[i]. A number may run to the end of
// what has arrived; then it is scanned again once more has.
func (s *scanner) scanNumber(b []byte, i int) ([]byte, int, bool) {
	for {
		end, ok := numberEnd(b, i)
		if end == len(b) {
			s.pos = i
			if s.more() {
				b, i = s.b, s.pos
				continue
			}
			if s.err != nil {
				return s.b, s.pos, false
			}
			b, i = s.b, s.pos
			end, ok = numberEnd(b, i)
		}
		if !ok {
			s.pos = end
			return b, end, s.syntaxError("invalid number")
		}
		return b, end, true
	}
}
