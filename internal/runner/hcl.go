package runner

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// parseHCLMap reads the HCL object literal of string keys and values that
// the manager passes as -backend-config=labels=<map> (state.HCLMap writes
// it): {"k"="v",...}, with HCL string escapes and doubled "$${"/"%%{".
func parseHCLMap(s string) (map[string]string, error) {
	p := &hclParser{s: strings.TrimSpace(s)}
	m := map[string]string{}
	if !p.eat('{') {
		return nil, errors.New("not an HCL object")
	}
	for {
		p.space()
		if p.eat('}') {
			break
		}
		k, err := p.str()
		if err != nil {
			return nil, err
		}
		p.space()
		if !p.eat('=') && !p.eat(':') {
			return nil, fmt.Errorf("no = after key %q", k)
		}
		p.space()
		v, err := p.str()
		if err != nil {
			return nil, err
		}
		m[k] = v
		p.space()
		p.eat(',')
	}
	if p.space(); p.i != len(p.s) {
		return nil, errors.New("text after the HCL object")
	}
	return m, nil
}

type hclParser struct {
	s string
	i int
}

func (p *hclParser) space() {
	for p.i < len(p.s) && strings.ContainsRune(" \t\r\n", rune(p.s[p.i])) {
		p.i++
	}
}

func (p *hclParser) eat(c byte) bool {
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *hclParser) str() (string, error) {
	if !p.eat('"') {
		return "", errors.New("expected a quoted string")
	}
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			return b.String(), nil
		case c == '\\' && p.i+1 < len(p.s):
			n := p.s[p.i+1]
			p.i += 2
			switch n {
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'u':
				if p.i+4 > len(p.s) {
					return "", errors.New("short \\u escape")
				}
				r, err := strconv.ParseUint(p.s[p.i:p.i+4], 16, 32)
				if err != nil {
					return "", err
				}
				b.WriteRune(rune(r))
				p.i += 4
			default:
				b.WriteByte(n)
			}
		case (c == '$' || c == '%') && strings.HasPrefix(p.s[p.i+1:], string(c)+"{"):
			b.WriteByte(c)
			p.i += 2
		default:
			b.WriteByte(c)
			p.i++
		}
	}
	return "", errors.New("unterminated string")
}
