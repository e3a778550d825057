package plan

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strings"
)

const (
	// HashPrefix starts every fingerprint this package computes. A hash
	// with another prefix (the legacy "p1:") is never compared, only
	// re-planned.
	HashPrefix = "p2:"
	// EmptyPlanHash is the fingerprint of a plan with no change:
	// "p2:" + hex(SHA-256("")), whatever the key.
	EmptyPlanHash = "p2:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
	// MinKeyLen is the shortest plan key Fingerprint accepts.
	MinKeyLen = 32
)

// ErrShortKey is returned for a plan key shorter than MinKeyLen bytes
// (including a missing one): there is never an unkeyed fingerprint.
var ErrShortKey = errors.New("plan key is shorter than 32 bytes")

// Fingerprint parses a `show -json` plan document and returns its "p2:"
// fingerprint under key. The key is checked first, so a short key fails
// even for an unreadable plan.
func Fingerprint(planJSON []byte, key []byte) (string, error) {
	if err := checkKey(key); err != nil {
		return "", err
	}
	p, err := Parse(planJSON)
	if err != nil {
		return "", err
	}
	return p.Fingerprint(key)
}

// Fingerprint returns the plan's "p2:" fingerprint under key
// (module-author guide §8.2).
//
// Each included change gives one line
//
//	<name>|<actions>|<hex HMAC-SHA256(key, canonical effect JSON)>
//
// where name is the resource address or "output.<name>", actions are the
// plan's actions comma-joined in plan order (so "delete,create" and
// "create,delete" differ) and the effect is described in effect.go.
// Included are resource changes that are not a plain no-op (an import or a
// move counts even on a no-op) and output changes that are not no-op. The
// lines are sorted and joined with "\n" with no trailing newline, so that
// a plan with no change hashes the empty text and gives EmptyPlanHash; the
// fingerprint is "p2:" + hex(SHA-256(joined text)).
//
// The same plan gives the same fingerprint every time; any change of a
// bound value, of an action or of the key gives another one.
func (p *Plan) Fingerprint(key []byte) (string, error) {
	if err := checkKey(key); err != nil {
		return "", err
	}
	lines := p.lines(key)
	sort.Strings(lines)
	sum := sha256.Sum256([]byte(strings.Join(lines, "\n")))
	return HashPrefix + hex.EncodeToString(sum[:]), nil
}

func checkKey(key []byte) error {
	if len(key) < MinKeyLen {
		return fmt.Errorf("%w (got %d bytes)", ErrShortKey, len(key))
	}
	return nil
}

func (p *Plan) lines(key []byte) []string {
	var lines []string
	for i := range p.resources {
		r := &p.resources[i]
		if r.kind == kindNoOp && !r.imports() && !r.moves() {
			continue
		}
		lines = append(lines, line(r.address, r.actions, key, resourceEffect(r)))
	}
	for i := range p.outputs {
		o := &p.outputs[i]
		if o.kind == kindNoOp {
			continue
		}
		lines = append(lines, line("output."+o.name, o.actions, key, outputEffect(o)))
	}
	return lines
}

func line(name string, actions []string, key []byte, eff map[string]any) string {
	var buf bytes.Buffer
	canonical(&buf, eff)
	mac := hmac.New(sha256.New, key)
	mac.Write(buf.Bytes())
	return name + "|" + strings.Join(actions, ",") + "|" + hex.EncodeToString(mac.Sum(nil))
}
