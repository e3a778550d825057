package state

import (
	"errors"
	"fmt"
)

// Reason classifies why a state could not be read. Its values are the
// reasons of the StateReadable condition, so a caller can copy them over.
type Reason string

const (
	// ReasonInconsistent: the Secrets do not form a sequence (missing or
	// duplicate chunk, unexpected name, no tfstate key). May be transient
	// while a writer is between two Secrets.
	ReasonInconsistent Reason = "StateInconsistent"
	// ReasonCorrupt: too many chunks, too large once decompressed, not gzip,
	// not JSON, or not state version 4.
	ReasonCorrupt Reason = "StateCorrupt"
	// ReasonEncrypted: OpenTofu state encryption is on; CAPTF cannot read it.
	ReasonEncrypted Reason = "StateEncrypted"
	// ReasonNotFound: there is no state Secret at all.
	ReasonNotFound Reason = "StateNotFound"
)

// Sentinels for errors.Is; every *Error matches the one of its Reason.
var (
	ErrInconsistent = errors.New("state inconsistent")
	ErrCorrupt      = errors.New("state corrupt")
	ErrEncrypted    = errors.New("state encrypted")
	ErrNotFound     = errors.New("state not found")
)

// Error is a state that exists but cannot be used, or does not exist. Its
// message names the cause and the Secrets involved, never state content,
// so it may go into a condition message, an event or a log.
type Error struct {
	Reason  Reason
	Message string
	// Fingerprint is Fingerprint of the Secrets the error was found in: as
	// long as they do not change, reading again gives the same error.
	Fingerprint string
}

func (e *Error) Error() string { return e.Message }

// Unwrap makes errors.Is(err, ErrCorrupt) and friends work.
func (e *Error) Unwrap() error {
	switch e.Reason {
	case ReasonInconsistent:
		return ErrInconsistent
	case ReasonCorrupt:
		return ErrCorrupt
	case ReasonEncrypted:
		return ErrEncrypted
	case ReasonNotFound:
		return ErrNotFound
	}
	return nil
}

// ReasonOf returns the Reason of a state error anywhere in err's chain.
// ok is false for other errors, e.g. a failed List, which are transient.
func ReasonOf(err error) (reason Reason, ok bool) {
	var se *Error
	if errors.As(err, &se) {
		return se.Reason, true
	}
	return "", false
}

func inconsistent(format string, args ...any) *Error {
	return &Error{Reason: ReasonInconsistent, Message: fmt.Sprintf(format, args...)}
}

func corrupt(format string, args ...any) *Error {
	return &Error{Reason: ReasonCorrupt, Message: fmt.Sprintf(format, args...)}
}
