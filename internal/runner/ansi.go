package runner

import "strings"

const esc = 0x1b

// StripANSI removes terminal escape sequences from s: CSI sequences such
// as colours and bold ("\x1b[31m", "\x1b[0m", "\x1b[1m"), OSC sequences
// such as hyperlinks and window titles (terminated by BEL or ST), DCS, SOS,
// PM and APC strings, and the shorter two- and three-byte escapes. A
// string sequence left unterminated is cut at the end of its line so that
// it never swallows the following lines. Other C0 control characters
// except tab and newline are removed too; a carriage return becomes a
// newline, since a terminal would show what follows it on a line of its
// own. A provider or a local-exec child is not bound by -no-color, so this
// runs on every step's stderr before it is searched.
func StripANSI(s string) string {
	if !strings.ContainsFunc(s, isStripped) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == esc:
			i = skipEscape(s, i)
		case c == '\r':
			b.WriteByte('\n')
			i++
			if i < len(s) && s[i] == '\n' {
				i++
			}
		case c < 0x20 && c != '\t' && c != '\n', c == 0x7f:
			i++
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}

func isStripped(r rune) bool {
	return (r < 0x20 && r != '\t' && r != '\n') || r == 0x7f
}

// skipEscape returns the index just past the escape sequence that starts
// with ESC at s[i].
func skipEscape(s string, i int) int {
	i++ // ESC
	if i >= len(s) {
		return i
	}
	switch c := s[i]; {
	case c == '[': // CSI: parameters 0x30-0x3F, intermediates 0x20-0x2F, final 0x40-0x7E.
		i++
		for i < len(s) && s[i] >= 0x20 && s[i] <= 0x3f {
			i++
		}
		if i < len(s) && s[i] >= 0x40 && s[i] <= 0x7e {
			i++
		}
		return i
	case c == ']' || c == 'P' || c == 'X' || c == '^' || c == '_': // OSC, DCS, SOS, PM, APC.
		return skipString(s, i+1)
	case c >= 0x20 && c <= 0x2f: // nF: intermediates then one final byte.
		for i < len(s) && s[i] >= 0x20 && s[i] <= 0x2f {
			i++
		}
		if i < len(s) && s[i] >= 0x30 && s[i] <= 0x7e {
			i++
		}
		return i
	case c >= 0x30 && c <= 0x7e: // Fp, Fe, Fs: one byte.
		return i + 1
	default:
		return i
	}
}

// skipString returns the index past the terminator (BEL or ESC \) of a
// control string starting at s[i], or the index of the next newline when
// the string is not terminated on its line.
func skipString(s string, i int) int {
	for ; i < len(s); i++ {
		switch s[i] {
		case 0x07:
			return i + 1
		case esc:
			if i+1 < len(s) && s[i+1] == '\\' {
				return i + 2
			}
			return i // a new escape sequence starts: the string was cut short.
		case '\n':
			return i
		}
	}
	return i
}
