package lint

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// Report is the result of one run.
type Report struct {
	// Context says what was checked, for the summary line: "module
	// ./aws-machine, role machine, contract v1alpha1".
	Context string `json:"-"`
	// Findings, sorted by file, line and ID once Finish ran.
	Findings []Finding `json:"findings"`
	// Summary counts the findings by severity.
	Summary Summary `json:"summary"`
	// Image describes the image an image run checked.
	Image any `json:"image,omitempty"`
}

// Summary counts findings by severity.
type Summary struct {
	Error   int `json:"error"`
	Warning int `json:"warning"`
	Info    int `json:"info"`
}

// Finish turns the warnings whose ID is in allowed into info findings
// (saying so in their message), sorts the findings and counts them.
// Errors cannot be allowed.
func (r *Report) Finish(allowed []string) {
	if r.Findings == nil {
		r.Findings = []Finding{}
	}
	for i, f := range r.Findings {
		if f.Severity == Warning && slices.Contains(allowed, f.ID) {
			r.Findings[i].Severity = Info
			r.Findings[i].Message = f.Message + " (warning allowed by --allow-warning)"
		}
	}
	slices.SortStableFunc(r.Findings, func(a, b Finding) int {
		if c := strings.Compare(a.File, b.File); c != 0 {
			return c
		}
		if a.Line != b.Line {
			return a.Line - b.Line
		}
		return strings.Compare(a.ID, b.ID)
	})
	r.Summary = Summary{}
	for _, f := range r.Findings {
		switch f.Severity {
		case Error:
			r.Summary.Error++
		case Warning:
			r.Summary.Warning++
		default:
			r.Summary.Info++
		}
	}
}

// ExitCode is the run's exit code: ExitFindings for an error finding, or
// for a warning when strict, else ExitOK.
func (r *Report) ExitCode(strict bool) int {
	if r.Summary.Error > 0 || strict && r.Summary.Warning > 0 {
		return ExitFindings
	}
	return ExitOK
}

// WriteText prints one line per finding, then the summary line.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	for _, f := range r.Findings {
		fmt.Fprintf(&b, "%s %s %s:%d %s\n", f.Severity, f.ID, printable(f.File), f.Line, printable(f.Message))
	}
	fmt.Fprintf(&b, "%d error(s), %d warning(s), %d info (%s)\n",
		r.Summary.Error, r.Summary.Warning, r.Summary.Info, r.Context)
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteJSON prints the report as one indented JSON document.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// printable quotes a file name or message that holds a control
// character, so that no name can make a line look like another finding.
func printable(s string) string {
	if strings.IndexFunc(s, unicode.IsControl) < 0 {
		return s
	}
	return strconv.Quote(s)
}
