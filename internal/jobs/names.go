package jobs

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"captf.io/captf/internal/decide"
)

// MaxNameLength is the longest Job name Name returns. The Job controller
// names the pod "<job>-<5 random characters>", and the pod's hostname is
// its full name only while that stays within 63 characters; the state
// lock records the hostname as its holder, so a Job name of at most 57
// characters keeps the lock holder identifying the pod.
const MaxNameLength = 57

// PerRunSecretPrefix starts the name of every per-run Secret.
const PerRunSecretPrefix = "captf-run-"

// Name returns the name of a Job:
//
//	captf-<kindShort>-<objectName>-<op>-a<attempt>-<hash6>
//
// When that would be longer than MaxNameLength, or when objectName holds a
// character a DNS label may not (a dot: object names are DNS subdomains),
// objectName is replaced by the first 16 hex characters of its SHA-256. The
// result is deterministic; Build checks it.
func Name(kindShort, objectName, op string, attempt int, hash6 string) string {
	tail := "-" + op + "-a" + strconv.Itoa(attempt) + "-" + hash6
	name := "captf-" + kindShort + "-" + objectName + tail
	if len(name) > MaxNameLength || strings.ContainsRune(objectName, '.') {
		name = "captf-" + kindShort + "-" + shortHash(objectName) + tail
	}
	return name
}

// Hash6 returns the first 6 hex characters of the SHA-256 over the four
// values that tell two runs of the same operation apart: the inputs hash
// (rendered inputs, state or backup, depending on the operation), the
// operation, the attempt and the tick (a time or a "restore/<backup>"
// marker; "" when the operation has none).
//
// The hashed bytes are the four values as netstrings, in that order:
// "<byte length>:<value>," each, the attempt in decimal. A length prefix
// makes the encoding unambiguous: no two different tuples hash the same
// bytes, whatever characters the values contain.
func Hash6(inputsHash, op string, attempt int, tick string) string {
	h := sha256.New()
	for _, v := range []string{inputsHash, op, strconv.Itoa(attempt), tick} {
		h.Write([]byte(strconv.Itoa(len(v)) + ":" + v + ","))
	}
	return hex.EncodeToString(h.Sum(nil))[:6]
}

// PerRunSecretName returns the name of the per-run Secret of a Job.
func PerRunSecretName(jobName string) string {
	return PerRunSecretPrefix + jobName
}

// shortHash is the first 16 hex characters of the SHA-256 of s, the way
// CAPTF shortens every name that does not fit.
func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:8])
}

// PodPattern matches the names of the pods of every Job Name gives an
// object (any operation and attempt): the Job name, "-" and the 5
// characters the Job controller appends. A state lock's holder hostname is
// such a pod name.
func PodPattern(kindShort, objectName string) *regexp.Regexp {
	names := regexp.QuoteMeta(objectName) + "|" + shortHash(objectName)
	return regexp.MustCompile("^captf-" + regexp.QuoteMeta(kindShort) + "-(" + names +
		")-(apply|plan|destroy|refresh|drift|restore)-a[0-9]+-[0-9a-f]{6}-[a-z0-9]{5}$")
}

// Ticks are what tells runs of the same inputs apart (Tick): the object's
// last successful refresh and drift check, and the backup a restore
// restores.
type Ticks struct {
	LastRefresh, LastDriftCheck *metav1.Time
	Restore                     string
}

// Tick is the part of the name hash of a Job of op that tells runs of the
// same inputs apart: a drift remediation (remediation) by the drift check
// it answers, a refresh or drift by the last successful one, a restore by
// its backup, any other run by nothing.
func (t Ticks) Tick(op decide.Operation, remediation bool) string {
	switch op {
	case decide.OpApply:
		if remediation && t.LastDriftCheck != nil {
			return "remediate/" + t.LastDriftCheck.UTC().Format(time.RFC3339)
		}
	case decide.OpRefresh:
		if t.LastRefresh != nil {
			return t.LastRefresh.UTC().Format(time.RFC3339)
		}
	case decide.OpDrift:
		if t.LastDriftCheck != nil {
			return t.LastDriftCheck.UTC().Format(time.RFC3339)
		}
	case decide.OpRestore:
		return "restore/" + t.Restore
	}
	return ""
}
