package plan

import (
	"strings"
	"testing"
)

// secret appears in every malformed document below; no error may quote it.
const secret = "s3cr3t-4711"

func TestParseRejects(t *testing.T) {
	valid := `{"format_version":"1.2","resource_changes":[{"address":"a.b","change":{"actions":["create"],"after":{"password":"` + secret + `"}}}]}`
	testCases := []struct {
		name     string
		planJSON string
		wantErr  string
	}{
		{name: "no input", planJSON: "", wantErr: "plan JSON: empty document"},
		{name: "white space only", planJSON: " \n\t", wantErr: "plan JSON: empty document"},
		{name: "cut short", planJSON: valid[:len(valid)-10], wantErr: "plan JSON: unexpected end of input"},
		{name: "syntax error after a value", planJSON: strings.Replace(valid, `"}}}]}`, `"x}}}]}`, 1), wantErr: "plan JSON: syntax error at byte"},
		{name: "not an object", planJSON: `["` + secret + `"]`, wantErr: "not a JSON object"},
		{name: "null", planJSON: "null", wantErr: "not a JSON object"},
		{name: "object without format_version", planJSON: `{"resource_changes":[]}`, wantErr: "format_version is missing"},
		{name: "errored plan", planJSON: `{"format_version":"1.2","errored":true}`, wantErr: "marked the plan as errored"},
		{name: "trailing data", planJSON: valid + ` {"` + secret + `":1}`, wantErr: "unexpected data after the document"},
		{name: "trailing garbage", planJSON: valid + secret, wantErr: "unexpected data after the document"},
		{name: "number where actions belong", planJSON: strings.Replace(valid, `["create"]`, `[4711.0815]`, 1), wantErr: "resource_changes.change.actions has the wrong type"},
		{name: "actions not a list", planJSON: strings.Replace(valid, `["create"]`, `"`+secret+`"`, 1), wantErr: "has the wrong type"},
		{name: "unknown action", planJSON: strings.Replace(valid, `["create"]`, `["`+secret+`"]`, 1), wantErr: "resource_changes[0]: change.actions has an unknown action"},
		{name: "empty actions", planJSON: strings.Replace(valid, `["create"]`, `[]`, 1), wantErr: "change.actions is empty"},
		{name: "unsupported combination", planJSON: strings.Replace(valid, `["create"]`, `["update","delete"]`, 1), wantErr: "not a supported combination"},
		{name: "importing not an object", planJSON: strings.Replace(valid, `"after"`, `"importing":"`+secret+`","after"`, 1), wantErr: "change.importing is not an object"},
		{name: "missing address", planJSON: strings.Replace(valid, `"address":"a.b",`, ``, 1), wantErr: "address is empty"},
		{name: "address over two lines", planJSON: strings.Replace(valid, `"a.b"`, `"a.b\nx|create|00"`, 1), wantErr: "address is empty or spans lines"},
		{name: "output with a replace action", planJSON: `{"format_version":"1.2","output_changes":{"o":{"actions":["delete","create"],"after":"` + secret + `"}}}`, wantErr: `output_changes["o"]: unsupported actions`},
		{name: "output with an unknown action", planJSON: `{"format_version":"1.2","output_changes":{"o":{"actions":["` + secret + `"]}}}`, wantErr: "unknown action"},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.planJSON))
			if err == nil {
				t.Fatal("Parse succeeded, want an error")
			}
			if !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error %q, want it to contain %q", err, tc.wantErr)
			}
			for _, leak := range []string{secret, "4711"} {
				if strings.Contains(err.Error(), leak) {
					t.Errorf("error %q quotes the plan's content %q", err, leak)
				}
			}
			// Every entry point fails the same way.
			if _, err := Summarize([]byte(tc.planJSON)); err == nil {
				t.Error("Summarize succeeded, want an error")
			}
			if _, err := Fingerprint([]byte(tc.planJSON), testKey); err == nil {
				t.Error("Fingerprint succeeded, want an error")
			}
		})
	}
}

func TestParseAccepts(t *testing.T) {
	testCases := []struct {
		name     string
		planJSON string
	}{
		// Both runtimes leave resource_changes and output_changes out when
		// there is nothing in them.
		{name: "minimal empty plan", planJSON: `{"format_version":"1.2"}`},
		{name: "unknown members are ignored", planJSON: `{"format_version":"1.2","planned_values":{},"configuration":{"x":[1,2]},"timestamp":"2026-01-01T00:00:00Z","applyable":true}`},
		{name: "surrounding white space", planJSON: "\n  {\"format_version\":\"1.2\"}\n"},
		{name: "importing null is no import", planJSON: `{"format_version":"1.2","resource_changes":[{"address":"a.b","change":{"actions":["no-op"],"importing":null}}]}`},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Summarize([]byte(tc.planJSON))
			if err != nil {
				t.Fatalf("Summarize: %v", err)
			}
			if !s.Empty() {
				t.Errorf("Summary = %+v, want an empty plan", s)
			}
		})
	}
}
