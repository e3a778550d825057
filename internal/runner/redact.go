package runner

import (
	"encoding/base64"
	"strings"
)

// Sensitive replaces every known secret value in what the runner reports.
const Sensitive = "(sensitive)"

const (
	// minSecretBytes: shorter values are never redacted. Replacing every
	// "1" or "yes" in a summary would make it unreadable while protecting
	// a value anyone could guess.
	minSecretBytes = 4
	// longValueBytes: each line this long of a multi-line value or of the
	// decoded bootstrap data is registered on its own.
	longValueBytes = 16
)

// Redactor replaces known secret values with "(sensitive)". Redaction is
// best effort: it cannot recognise a secret a module derives and prints.
// Build it before use; Redact may then be called concurrently. A nil
// *Redactor redacts nothing.
type Redactor struct {
	secrets map[string]bool
}

// NewRedactor returns a Redactor knowing the given values (see Add).
func NewRedactor(values ...string) *Redactor {
	r := &Redactor{secrets: map[string]bool{}}
	r.Add(values...)
	return r
}

// Add registers explicit secret values, such as sensitive variable values.
// Values shorter than 4 bytes are ignored. A value with surrounding
// whitespace (a Secret key written from a file often ends in a newline) is
// also registered trimmed, and each line of at least 16 bytes of a
// multi-line value (a PEM key, a kubeconfig) is registered on its own,
// since a failure summary is built from single lines.
func (r *Redactor) Add(values ...string) {
	for _, v := range values {
		r.add(v)
		if trimmed := strings.TrimSpace(v); trimmed != v {
			r.add(trimmed)
		}
		if strings.ContainsAny(v, "\r\n") {
			r.addLines(v)
		}
	}
}

// AddCredentials registers every value of the identity's credentials
// (NAME=value entries), whatever the name and down to 4 bytes: a region or
// an account ID can be what an attacker lacks. Pass it the identity's
// credentials, not the whole process environment: the runner's own values
// (TF_DATA_DIR, PATH) would otherwise be redacted from every path a
// summary mentions.
func (r *Redactor) AddCredentials(environ []string) {
	for _, entry := range environ {
		if _, value, ok := strings.Cut(entry, "="); ok {
			r.Add(value)
		}
	}
}

// AddBootstrapData registers the machine's bootstrap data: the base64 text
// the module receives, and each line of at least 16 bytes of its decoded
// content (a cloud-init document carries join tokens and keys on lines of
// their own).
func (r *Redactor) AddBootstrapData(encoded string) {
	r.Add(encoded)
	decoded, err := base64.StdEncoding.DecodeString(strings.TrimSpace(encoded))
	if err != nil {
		return
	}
	if len(decoded) >= longValueBytes {
		r.add(string(decoded))
	}
	r.addLines(string(decoded))
}

// Redact returns s with every occurrence of a known secret replaced by
// "(sensitive)". Overlapping or adjacent occurrences collapse into one
// marker, so no byte of any occurrence survives.
func (r *Redactor) Redact(s string) string {
	if r == nil || len(r.secrets) == 0 || s == "" {
		return s
	}
	// Marking every occurrence first makes the result independent of the
	// order secrets are tried in, overlaps included.
	var covered []bool
	for secret := range r.secrets {
		for from := 0; from < len(s); {
			j := strings.Index(s[from:], secret)
			if j < 0 {
				break
			}
			if covered == nil {
				covered = make([]bool, len(s))
			}
			start := from + j
			for k := start; k < start+len(secret); k++ {
				covered[k] = true
			}
			from = start + 1
		}
	}
	if covered == nil {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if !covered[i] {
			b.WriteByte(s[i])
			continue
		}
		b.WriteString(Sensitive)
		for i+1 < len(s) && covered[i+1] {
			i++
		}
	}
	return b.String()
}

func (r *Redactor) add(v string) {
	if len(v) < minSecretBytes || r.secrets[v] {
		return
	}
	if r.secrets == nil {
		r.secrets = map[string]bool{}
	}
	r.secrets[v] = true
}

func (r *Redactor) addLines(v string) {
	for _, line := range strings.FieldsFunc(v, func(c rune) bool { return c == '\n' || c == '\r' }) {
		if line = strings.TrimSpace(line); len(line) >= longValueBytes {
			r.add(line)
		}
	}
}
