package runner

import (
	"encoding/base64"
	"strings"
	"testing"
)

// Every value of the identity's credentials is redacted, whatever its
// name and however short, down to 4 bytes.
func TestRedactorAddCredentials(t *testing.T) {
	environ := []string{
		"AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI",
		"aws_session_token=FwoGZXIvYXdzEJr",
		"GITHUB_TOKEN=ghp_abc",
		"HCLOUD_CERT=c3rt", // exactly the minimum length
		"API_KEY=abc",      // too short to redact
		"REGION=eu-west-1", // short, harmless-looking name: redacted too
		"PROJECT_ID=my-project-123",
		"SERVICE_ACCOUNT_JSON={\"k\":\"v\"}\n", // trailing newline: redacted trimmed too
		"PRIVATE_KEY_PEM=-----BEGIN KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END KEY-----\n",
		"NO_EQUALS_SIGN",
	}
	r := NewRedactor()
	r.AddCredentials(environ)

	testCases := []struct {
		name string
		in   string
		want string
	}{
		{name: "secret-named value", in: "signature for wJalrXUtnFEMI failed", want: "signature for (sensitive) failed"},
		{name: "lower-case name", in: "token FwoGZXIvYXdzEJr expired", want: "token (sensitive) expired"},
		{name: "token", in: "bad ghp_abc", want: "bad (sensitive)"},
		{name: "four-byte value", in: "c3rt", want: "(sensitive)"},
		{name: "three-byte value stays visible", in: "abc def", want: "abc def"},
		{name: "short value of a plain name", in: "no capacity in eu-west-1", want: "no capacity in (sensitive)"},
		{name: "value under 16 bytes of a plain name", in: "project my-project-123 not found", want: "project (sensitive) not found"},
		{name: "trimmed value", in: `bad {"k":"v"}`, want: "bad (sensitive)"},
		{name: "one line of a multi-line secret", in: "parse MIIEvQIBADANBgkqhkiG9w0BAQEFAASC: bad", want: "parse (sensitive): bad"},
		{name: "every occurrence", in: "c3rt/c3rt", want: "(sensitive)/(sensitive)"},
		{name: "nothing known", in: "Invalid reference NO_EQUALS_SIGN", want: "Invalid reference NO_EQUALS_SIGN"},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			if got := r.Redact(tc.in); got != tc.want {
				t.Errorf("Redact(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestRedactorOverlaps(t *testing.T) {
	testCases := []struct {
		name    string
		secrets []string
		in      string
		want    string
	}{
		{name: "a secret inside a longer one", secrets: []string{"abcdefgh", "cdef"}, in: "x abcdefgh y cdef", want: "x (sensitive) y (sensitive)"},
		{name: "overlapping secrets leave nothing behind", secrets: []string{"abcdef", "defghi"}, in: "abcdefghi!", want: "(sensitive)!"},
		{name: "overlapping occurrences of one secret", secrets: []string{"aaaa"}, in: "aaaaaa", want: "(sensitive)"},
		{name: "explicit value with a trailing newline matches trimmed", secrets: []string{"s3cr3t-value\n"}, in: "got s3cr3t-value.", want: "got (sensitive)."},
		{name: "empty and tiny values are ignored", secrets: []string{"", "a", "ab", "abc"}, in: "abc", want: "abc"},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			if got := NewRedactor(tc.secrets...).Redact(tc.in); got != tc.want {
				t.Errorf("Redact(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestRedactorBootstrapData(t *testing.T) {
	cloudInit := "#cloud-config\nwrite_files:\n- path: /etc/kubeadm.yaml\n  content: |\n    token: abcdef.0123456789abcdef\n    caCertHashes: [sha256:9d1c]\nruncmd: [kubeadm join]\n"
	encoded := base64.StdEncoding.EncodeToString([]byte(cloudInit))
	r := NewRedactor()
	r.AddBootstrapData(encoded)

	testCases := []struct {
		name string
		in   string
		want string
	}{
		{name: "the encoded value", in: "user_data " + encoded + " too long", want: "user_data (sensitive) too long"},
		{name: "a decoded line of 16 bytes or more", in: "parse error near token: abcdef.0123456789abcdef", want: "parse error near (sensitive)"},
		{name: "decoded lines under 16 bytes stay visible", in: "#cloud-config write_files:", want: "#cloud-config write_files:"},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			if got := r.Redact(tc.in); got != tc.want {
				t.Errorf("Redact(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestNilRedactorRedactsNothing(t *testing.T) {
	var r *Redactor
	if got := r.Redact("hunter22"); got != "hunter22" {
		t.Errorf("nil Redactor changed the text: %q", got)
	}
}

func TestRedactorNeverLeaksASecret(t *testing.T) {
	// Secrets placed at every offset of a text, against every neighbour.
	secret := "Zq9-very-secret-Zq9"
	r := NewRedactor(secret)
	for i := range 40 {
		text := strings.Repeat("ab", i) + secret + secret[:i%len(secret)] + secret
		if got := r.Redact(text); strings.Contains(got, secret) {
			t.Fatalf("secret survived in %q", got)
		}
	}
}
