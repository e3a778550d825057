package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSummaryFromRuntimeOutput(t *testing.T) {
	const (
		initWant  = "Failed to query available provider packages"
		applyWant = "local-exec provisioner error (null_resource.boot); " +
			"mkdir /proc/captf-capture: no such file or directory (local_file.hosts)"
		// Each runtime lists validate's diagnostics in its own order.
		validateWantTerraform = "Incorrect attribute value type (main.tf:8); Reference to undeclared input variable (main.tf:3)"
		validateWantTofu      = "Reference to undeclared input variable (main.tf:3); Incorrect attribute value type (main.tf:8)"
	)
	testCases := []struct {
		fixture string
		step    string
		stdout  bool // the fixture is the step's stdout, not its stderr
		want    string
	}{
		{fixture: "terraform-1.8-init-mirror-missing-nocolor.txt", step: "init", want: initWant},
		{fixture: "terraform-1.8-init-mirror-missing-color.txt", step: "init", want: initWant},
		{fixture: "tofu-1.12-init-mirror-missing-nocolor.txt", step: "init", want: initWant},
		{fixture: "tofu-1.12-init-mirror-missing-color.txt", step: "init", want: initWant},
		{fixture: "terraform-1.8-apply-nocolor.txt", step: "apply", want: applyWant},
		{fixture: "terraform-1.8-apply-color.txt", step: "apply", want: applyWant},
		{fixture: "tofu-1.12-apply-nocolor.txt", step: "apply", want: applyWant},
		{fixture: "tofu-1.12-apply-color.txt", step: "apply", want: applyWant},
		{fixture: "terraform-1.8-validate.json", step: "validate", stdout: true, want: validateWantTerraform},
		{fixture: "tofu-1.12-validate.json", step: "validate", stdout: true, want: validateWantTofu},
	}
	for _, tc := range testCases {
		t.Run(tc.fixture, func(t *testing.T) {
			out := StepOutput{Step: tc.step, Exit: 1}
			if tc.stdout {
				out.Stdout = readFixture(t, tc.fixture)
			} else {
				out.Stderr = readFixture(t, tc.fixture)
			}
			if got := Summary(out, nil); got != tc.want {
				t.Errorf("Summary:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestSummary(t *testing.T) {
	testCases := []struct {
		name string
		out  StepOutput
		want string
	}{
		{
			name: "framed diagnostic without colour",
			out: StepOutput{Step: "plan", Exit: 1, Stderr: []byte(
				"╷\n│ Error: Invalid reference\n│ \n│   on main.tf line 3, in resource \"null_resource\" \"a\":\n│    3:   triggers = { x = foo }\n╵\n")},
			want: "Invalid reference (main.tf:3)",
		},
		{
			name: "an Error: inside a diagnostic's detail is not a header",
			out: StepOutput{Step: "apply", Exit: 1, Stderr: []byte(
				"\nError: local-exec provisioner error\n\n  with null_resource.a,\n\nError running command 'x': exit status 1. Output: Error: from the script\n")},
			want: "local-exec provisioner error (null_resource.a)",
		},
		{
			name: "an Error: line of a command's output inside the detail is not a header",
			out: StepOutput{Step: "apply", Exit: 1, Stderr: []byte(
				"\nError: local-exec provisioner error\n\nError running command './boot.sh': exit status 1. Output: starting\nError: from the script\n\n")},
			want: "local-exec provisioner error",
		},
		{
			name: "an indented Error: inside a frame is not a header",
			out: StepOutput{Step: "state-push", Exit: 1, Stderr: []byte(
				"╷\n│ Error: Failed to write state\n│ \n│ the backend said:\n│ \n│   Error: conflict\n╵\n")},
			want: "Failed to write state",
		},
		{
			name: "an error line printed by a child, outside any diagnostic",
			out:  StepOutput{Step: "apply", Exit: 1, Stderr: []byte("\x1b[31mError: credentials expired\x1b[0m\n")},
			want: "credentials expired",
		},
		{
			name: "the same error for several resources names each resource",
			out: StepOutput{Step: "apply", Exit: 1, Stderr: []byte(
				"\nError: quota exceeded\n\n  with aws_instance.a[0],\n\nError: quota exceeded\n\n  with aws_instance.a[1],\n")},
			want: "quota exceeded (aws_instance.a[0]); quota exceeded (aws_instance.a[1])",
		},
		{
			name: "an error repeated verbatim is listed once",
			out:  StepOutput{Step: "destroy", Exit: 1, Stderr: []byte("\nError: timeout\n\ndetail\n\nError: timeout\n\ndetail\n")},
			want: "timeout",
		},
		{
			name: "warnings are not errors",
			out:  StepOutput{Step: "plan", Exit: 1, Stderr: []byte("\nWarning: Deprecated attribute\n\nsoon gone\n")},
			want: "step plan exited 1; see the Job's logs",
		},
		{
			name: "no stderr at all",
			out:  StepOutput{Step: "state-push", Exit: 137},
			want: "step state-push exited 137; see the Job's logs",
		},
		{
			name: "a cut first line of a truncated tail is skipped",
			out:  StepOutput{Step: "apply", Exit: 1, StderrTruncated: true, Stderr: []byte("Error: half a line\n\nError: whole\n")},
			want: "whole",
		},
		{
			name: "the first line of a complete stderr counts",
			out:  StepOutput{Step: "apply", Exit: 1, Stderr: []byte("Error: first\n")},
			want: "first",
		},
		{
			name: "validate with a diagnostic address",
			out: StepOutput{Step: "validate", Exit: 1, Stdout: []byte(
				`{"valid":false,"error_count":1,"diagnostics":[{"severity":"error","summary":"Invalid count argument","address":"module.role.null_resource.a"}]}`)},
			want: "Invalid count argument (module.role.null_resource.a)",
		},
		{
			name: "a contract output the module lacks is named",
			out: StepOutput{Step: "validate", Exit: 1, Stdout: []byte(
				`{"valid":false,"error_count":1,"diagnostics":[{"severity":"error","summary":"Unsupported attribute","detail":"This object does not have an attribute named \"health\".","range":{"filename":"main.tf.json","start":{"line":22,"column":79,"byte":78}}}]}`)},
			want: `The module has no output "health", which the module contract requires (main.tf.json:22)`,
		},
		{
			name: "an unsupported attribute in the user's module keeps the runtime's words",
			out: StepOutput{Step: "validate", Exit: 1, Stdout: []byte(
				`{"valid":false,"error_count":1,"diagnostics":[{"severity":"error","summary":"Unsupported attribute","detail":"This object does not have an attribute named \"x\".","range":{"filename":"main.tf","start":{"line":3}}}]}`)},
			want: "Unsupported attribute (main.tf:3)",
		},
		{
			name: "validate without range keeps the summary alone",
			out: StepOutput{Step: "validate", Exit: 1, Stdout: []byte(
				`{"valid":false,"error_count":1,"diagnostics":[{"severity":"error","summary":"Module not installed","detail":"run init"}]}`)},
			want: "Module not installed",
		},
		{
			name: "validate whose output is not JSON falls back to its stderr",
			out:  StepOutput{Step: "validate", Exit: 1, Stdout: []byte("not json"), Stderr: []byte("\nError: Failed to load plugin schemas\n")},
			want: "Failed to load plugin schemas",
		},
		{
			name: "validate with only warnings falls back to the exit code",
			out: StepOutput{Step: "validate", Exit: 1, Stdout: []byte(
				`{"valid":true,"error_count":0,"diagnostics":[{"severity":"warning","summary":"Deprecated"}]}`)},
			want: "step validate exited 1; see the Job's logs",
		},
		{
			name: "JSON on another step's stdout is ignored",
			out: StepOutput{Step: "plan", Exit: 1, Stdout: []byte(
				`{"diagnostics":[{"severity":"error","summary":"not a validate document"}]}`)},
			want: "step plan exited 1; see the Job's logs",
		},
		{
			name: "a multi-line validate summary becomes one line",
			out: StepOutput{Step: "validate", Exit: 1, Stdout: []byte(
				`{"diagnostics":[{"severity":"error","summary":"Bad\nthing\t here"}]}`)},
			want: "Bad thing here",
		},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Summary(tc.out, nil); got != tc.want {
				t.Errorf("Summary:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestSummaryRedaction(t *testing.T) {
	const secret = "ghp_0123456789abcdefXYZ"
	r := NewRedactor()
	r.Add(secret)

	t.Run("in a stderr header", func(t *testing.T) {
		got := Summary(StepOutput{Step: "apply", Exit: 1, Stderr: []byte("\nError: token " + secret + " rejected\n")}, r)
		if want := "token (sensitive) rejected"; got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	})
	t.Run("in a validate diagnostic", func(t *testing.T) {
		got := Summary(StepOutput{Step: "validate", Exit: 1, Stdout: []byte(
			`{"diagnostics":[{"severity":"error","summary":"bad token ` + secret + `"}]}`)}, r)
		if want := "bad token (sensitive)"; got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	})
	t.Run("before the cap: a secret across the 512-byte boundary leaves no prefix", func(t *testing.T) {
		// Without redaction the cap would keep the secret's first bytes.
		header := strings.Repeat("x", SummaryMaxBytes-10) + " " + secret + " end"
		got := Summary(StepOutput{Step: "apply", Exit: 1, Stderr: []byte("\nError: " + header + "\n")}, r)
		if strings.Contains(got, secret[:8]) {
			t.Errorf("a prefix of the secret survived the cap: %q", got[len(got)-40:])
		}
		if len(got) > SummaryMaxBytes {
			t.Errorf("len %d > %d", len(got), SummaryMaxBytes)
		}
	})
	t.Run("a secret whose spacing only matches once collapsed", func(t *testing.T) {
		r := NewRedactor("alpha beta gamma delta")
		got := Summary(StepOutput{Step: "apply", Exit: 1, Stderr: []byte("\nError: alpha beta\tgamma  delta\n")}, r)
		if got != Sensitive {
			t.Errorf("got %q", got)
		}
	})
}

func TestSummaryCap(t *testing.T) {
	testCases := []struct {
		name   string
		header string
	}{
		{name: "ASCII", header: strings.Repeat("a", 2000)},
		{name: "two-byte runes", header: strings.Repeat("é", 1000)},
		{name: "three-byte runes", header: strings.Repeat("€", 700)},
		{name: "four-byte runes", header: strings.Repeat("😀", 500)},
		{name: "invalid UTF-8 becomes U+FFFD", header: strings.Repeat("a\xff\xfe", 600)},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			got := Summary(StepOutput{Step: "apply", Exit: 1, Stderr: []byte("\nError: " + tc.header + "\n")}, nil)
			if len(got) > SummaryMaxBytes {
				t.Errorf("len %d > %d", len(got), SummaryMaxBytes)
			}
			if len(got) < SummaryMaxBytes-4 {
				t.Errorf("len %d: cut far below the cap", len(got))
			}
			if !utf8.ValidString(got) {
				t.Errorf("not valid UTF-8: %q", got[len(got)-8:])
			}
			if !strings.HasSuffix(got, "…") {
				t.Errorf("a cut summary does not end with an ellipsis: %q", got[len(got)-8:])
			}
		})
	}
	t.Run("many errors are joined and capped", func(t *testing.T) {
		var stderr strings.Builder
		for i := range 100 {
			stderr.WriteString("\nError: error number " + strings.Repeat("z", i%7) + string(rune('A'+i%26)) + "\n")
		}
		got := Summary(StepOutput{Step: "apply", Exit: 1, Stderr: []byte(stderr.String())}, nil)
		if len(got) > SummaryMaxBytes || !strings.HasPrefix(got, "error number A; error number zB; ") {
			t.Errorf("got %d bytes: %q", len(got), got)
		}
	})
}

func FuzzSummary(f *testing.F) {
	for _, name := range []string{
		"terraform-1.8-apply-color.txt",
		"tofu-1.12-init-mirror-missing-nocolor.txt",
		"terraform-1.8-validate.json",
	} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add("apply", 1, b, false, "module.role.null_resource.boot")
		f.Add("validate", 1, b, true, "Missing required")
	}
	f.Fuzz(func(t *testing.T, step string, exit int, output []byte, truncated bool, secret string) {
		// A secret sharing characters with the marker or the ellipsis could
		// be rebuilt from them and their neighbours: redaction works on
		// occurrences in the text, so keep to secrets it can be judged on.
		if strings.ContainsAny(secret, "()…") || strings.TrimSpace(secret) != secret || len(secret) < minSecretBytes {
			secret = "fuzz-secret-value"
		}
		r := NewRedactor(secret)
		for _, out := range []StepOutput{
			{Step: step, Exit: exit, Stderr: output, StderrTruncated: truncated},
			{Step: StepValidate, Exit: exit, Stdout: output},
		} {
			got := Summary(out, r)
			if got == "" || len(got) > SummaryMaxBytes || !utf8.ValidString(got) {
				t.Fatalf("bad summary (%d bytes): %q", len(got), got)
			}
			if strings.ContainsAny(got, "\n\r\x1b") {
				t.Fatalf("summary not a clean single line: %q", got)
			}
			if strings.Contains(got, secret) {
				t.Fatalf("secret %q leaked: %q", secret, got)
			}
		}
	})
}
