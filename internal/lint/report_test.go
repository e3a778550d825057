package lint

import (
	"strings"
	"testing"
)

// The text report: sorted by file, line and ID; allowed warnings become
// info and say so; errors stay errors; a file name cannot forge a line.
func TestReport(t *testing.T) {
	r := &Report{Context: "module m, role machine, contract v1alpha1", Findings: []Finding{
		{ID: "input/type", Severity: Error, File: "b.tf", Line: 3, Message: "x"},
		{ID: "input/default", Severity: Warning, File: "b.tf", Line: 3, Message: "y"},
		{ID: "input/required", Severity: Error, File: Whole, Message: "z"},
		{ID: "module/version", Severity: Warning, File: "a\nerror fake main.tf:1 injected", Line: 1, Message: "w"},
	}}
	r.Finish([]string{"input/default", "input/type"})
	var b strings.Builder
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	want := `error input/required -:0 z
warning module/version "a\nerror fake main.tf:1 injected":1 w
info input/default b.tf:3 y (warning allowed by --allow-warning)
error input/type b.tf:3 x
2 error(s), 1 warning(s), 1 info (module m, role machine, contract v1alpha1)
`
	if b.String() != want {
		t.Errorf("report:\n%s\nwant:\n%s", b.String(), want)
	}
	if r.ExitCode(false) != ExitFindings {
		t.Errorf("exit %d with errors", r.ExitCode(false))
	}
	warnOnly := &Report{Findings: []Finding{{ID: "input/default", Severity: Warning, File: "a.tf", Line: 1}}}
	warnOnly.Finish(nil)
	if warnOnly.ExitCode(false) != ExitOK || warnOnly.ExitCode(true) != ExitFindings {
		t.Errorf("a warning: exit %d, strict %d; want 0 and 1", warnOnly.ExitCode(false), warnOnly.ExitCode(true))
	}
}
