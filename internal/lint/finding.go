package lint

import (
	"errors"
	"fmt"
)

// Severity is how much a finding matters.
type Severity string

const (
	// Error findings break the contract: the module or image will fail.
	Error Severity = "error"
	// Warning findings are probably mistakes.
	Warning Severity = "warning"
	// Info findings are worth knowing.
	Info Severity = "info"
)

// Finding is one result of one check.
type Finding struct {
	// ID is the check's identifier from the documented check table,
	// such as "input/required".
	ID string `json:"id"`
	// Severity is error, warning or info.
	Severity Severity `json:"severity"`
	// File is the path of the file the finding is about, relative to
	// the module directory (or an absolute path in the image), or "-"
	// for a finding about the whole module or image.
	File string `json:"file"`
	// Line is the 1-based line in File, or 0.
	Line int `json:"line"`
	// Message says what is wrong and what to do.
	Message string `json:"message"`
}

// Whole is the File of a finding about the whole module or image.
const Whole = "-"

// Exit codes of tfcapi-lint, as documented.
const (
	// ExitOK: no error finding (and no warning with --strict).
	ExitOK = 0
	// ExitFindings: an error finding, or a warning with --strict.
	ExitFindings = 1
	// ExitUnparsable: the module or image could not be read (parse,
	// pull or extraction failure, or an image over the size caps).
	ExitUnparsable = 2
	// ExitUsage: a missing or unknown role, an unknown contract, a
	// wrong number of arguments or a bad image reference.
	ExitUsage = 3
)

// UnreadableError is an input the checks could not read: tfcapi-lint
// exits with ExitUnparsable.
type UnreadableError struct{ Err error }

func (e *UnreadableError) Error() string { return e.Err.Error() }
func (e *UnreadableError) Unwrap() error { return e.Err }

// Unreadable wraps an error as an UnreadableError.
func Unreadable(format string, args ...any) error {
	return &UnreadableError{Err: fmt.Errorf(format, args...)}
}

// UsageError is a command line tfcapi-lint cannot act on: it exits with
// ExitUsage.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// Usage wraps an error as a UsageError.
func Usage(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

// ExitCodeOf returns the exit code of a run that failed with err.
func ExitCodeOf(err error) int {
	var usage *UsageError
	if errors.As(err, &usage) {
		return ExitUsage
	}
	return ExitUnparsable
}
