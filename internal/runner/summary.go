package runner

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// SummaryMaxBytes caps a failure summary (error.tail in the result,
// status.lastRun.error.summary on the object).
const SummaryMaxBytes = 512

// StepValidate is the name of the validate step, whose summary is built
// from its -json diagnostics rather than from its stderr.
const StepValidate = "validate"

// summarySeparator joins the errors of one step.
const summarySeparator = "; "

// StepOutput is what the runner kept of a failed step.
type StepOutput struct {
	// Step is the step's name as reported in the result ("init", ...).
	Step string
	// Exit is the step's exit code.
	Exit int
	// Stdout is validate's -json document; ignored for other steps.
	Stdout []byte
	// Stderr is the tail of the step's stderr (TailBuffer.Bytes).
	Stderr []byte
	// StderrTruncated is true when older stderr was discarded
	// (TailBuffer.Truncated): its first line is then incomplete and skipped.
	StderrTruncated bool
}

// Summary returns the failure summary of a failed step, never raw output:
// for validate, the error diagnostics of its -json document; for every
// other step (and for a validate whose document holds none), the
// "Error: <summary>" header lines of its stderr after stripping ANSI
// escapes, in both the plain form printed with -no-color and the framed
// "│ Error:" form printed with colour. Each error is followed by the
// resource address, or file and line, it concerns when the runtime names
// one; repeated errors are listed once and joined with "; ". When nothing
// is found it returns "step <name> exited <code>; see the Job's logs".
//
// Known secrets are replaced by "(sensitive)" before the summary is capped
// at SummaryMaxBytes on a UTF-8 boundary, so a cut can never leave part of a
// secret behind.
func Summary(out StepOutput, r *Redactor) string {
	var items []string
	if out.Step == StepValidate {
		items = validateErrors(out.Stdout)
	}
	if len(items) == 0 {
		items = stderrErrors(out.Stderr, out.StderrTruncated)
	}
	s := strings.Join(unique(items), summarySeparator)
	if s == "" {
		s = fmt.Sprintf("step %s exited %d; see the Job's logs", out.Step, out.Exit)
	}
	// Redacting again after whitespace is collapsed catches a secret that
	// only appears once its spacing matches.
	return capSummary(r.Redact(singleLine(r.Redact(s))), SummaryMaxBytes)
}

// validateDocument is the part of `validate -json` output the summary uses
// (the same shape in Terraform and OpenTofu).
type validateDocument struct {
	Diagnostics []struct {
		Severity string `json:"severity"`
		Summary  string `json:"summary"`
		Detail   string `json:"detail"`
		Address  string `json:"address"`
		Range    *struct {
			Filename string `json:"filename"`
			Start    struct {
				Line int `json:"line"`
			} `json:"start"`
		} `json:"range"`
	} `json:"diagnostics"`
}

// validateErrors returns the error diagnostics of a validate -json
// document, or nothing when stdout holds no such document.
func validateErrors(stdout []byte) []string {
	var doc validateDocument
	dec := json.NewDecoder(bytes.NewReader(stdout))
	if err := dec.Decode(&doc); err != nil {
		return nil
	}
	var items []string
	for _, d := range doc.Diagnostics {
		if d.Severity != "error" || strings.TrimSpace(d.Summary) == "" {
			continue
		}
		where := d.Address
		if where == "" && d.Range != nil && d.Range.Filename != "" {
			where = d.Range.Filename
			if d.Range.Start.Line > 0 {
				where = fmt.Sprintf("%s:%d", where, d.Range.Start.Line)
			}
		}
		summary := d.Summary
		if d.Range != nil && d.Range.Filename == rootFile && d.Summary == "Unsupported attribute" {
			// The generated root reads the module's outputs: a missing
			// one breaks the contract. Only the name is taken from the
			// detail, never anything else it says.
			if m := missingAttribute.FindStringSubmatch(d.Detail); m != nil {
				summary = fmt.Sprintf("The module has no output %q, which the module contract requires", m[1])
			}
		}
		items = append(items, summaryItem(summary, where))
	}
	return items
}

// rootFile is the root module CAPTF generates around the user's module.
const rootFile = "main.tf.json"

// missingAttribute finds the attribute a "Unsupported attribute"
// diagnostic names.
var missingAttribute = regexp.MustCompile(`attribute named "([A-Za-z_][A-Za-z0-9_-]*)"`)

var (
	// "with module.role.null_resource.boot," names the resource instance.
	withLine = regexp.MustCompile(`^with (.+),$`)
	// `on ../../module/main.tf line 5, in resource "x" "y":` names the file.
	onLine = regexp.MustCompile(`^on (.+) line ([0-9]+)[,:]`)
)

// stderrErrors returns the diagnostic headers found in stderr. A header is
// a line "Error: <summary>" that opens a diagnostic: at the start of the
// output, after a blank line (-no-color), or after the "╷" that opens a
// framed diagnostic, with the "│ " rule removed (colour). An "Error:" line
// inside a diagnostic's detail (a command's output, say) is not one. The
// first line of a truncated tail is skipped: it may be the end of any line.
func stderrErrors(stderr []byte, truncated bool) []string {
	text := StripANSI(strings.ToValidUTF8(string(stderr), "\uFFFD"))
	lines := strings.Split(text, "\n")
	var items []string
	for i, line := range lines {
		if i == 0 && truncated {
			continue
		}
		header, ok := strings.CutPrefix(unframe(line), "Error: ")
		if !ok || strings.TrimSpace(header) == "" {
			continue
		}
		if i > 0 && !opensDiagnostic(lines[i-1]) {
			continue
		}
		items = append(items, summaryItem(header, diagnosticSubject(lines[i+1:])))
	}
	return items
}

// opensDiagnostic reports whether a line may precede a diagnostic header.
func opensDiagnostic(prev string) bool {
	prev = strings.TrimSpace(unframe(prev))
	return prev == "" || prev == "╷"
}

// unframe removes the "│ " rule the runtimes draw left of a framed
// diagnostic, and only the rule: indentation inside the frame is kept.
func unframe(line string) string {
	rest, ok := strings.CutPrefix(line, "│")
	if !ok {
		return line
	}
	return strings.TrimPrefix(rest, " ")
}

// diagnosticSubject returns what a diagnostic concerns, from the lines that
// follow its header: the resource address of its "with" line, else the
// file and line of its "on" line, else "".
func diagnosticSubject(following []string) string {
	for _, line := range following {
		line = strings.TrimSpace(unframe(line))
		if line == "" {
			continue
		}
		if m := withLine.FindStringSubmatch(line); m != nil {
			return m[1]
		}
		if m := onLine.FindStringSubmatch(line); m != nil {
			return m[1] + ":" + m[2]
		}
		return "" // the first non-blank line is the detail: no subject.
	}
	return ""
}

func summaryItem(summary, where string) string {
	summary = strings.TrimSpace(StripANSI(summary))
	if where = strings.TrimSpace(StripANSI(where)); where != "" {
		return summary + " (" + where + ")"
	}
	return summary
}

func unique(items []string) []string {
	seen := make(map[string]bool, len(items))
	out := items[:0:0]
	for _, it := range items {
		if !seen[it] {
			seen[it] = true
			out = append(out, it)
		}
	}
	return out
}

// singleLine makes s valid UTF-8 on one line: a summary lands in a
// condition message and an event note.
func singleLine(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsControl(r)
	}), " ")
}

// capSummary shortens s to at most max bytes on a rune boundary, ending it
// with "…" when something was cut.
func capSummary(s string, max int) string {
	if len(s) <= max {
		return s
	}
	const ellipsis = "…"
	return truncateUTF8(s, max-len(ellipsis)) + ellipsis
}

// truncateUTF8 returns the longest prefix of s of at most max bytes that
// does not split a rune.
func truncateUTF8(s string, max int) string {
	if max <= 0 {
		return ""
	}
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}
