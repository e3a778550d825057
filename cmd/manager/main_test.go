package main

import (
	"strings"
	"testing"
)

// What a user sees from the command line before the manager connects
// anywhere: version, help and refusals with their exit codes.
func TestCommandLine(t *testing.T) {
	testCases := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout []string
		wantStderr []string
	}{
		{name: "--version", args: []string{"--version"}, wantStdout: []string{"CAPTF manager ", "module contract v1alpha1"}},
		{name: "version subcommand", args: []string{"version"}, wantStdout: []string{"CAPTF manager ", "module contract v1alpha1"}},
		{name: "--version=raw", args: []string{"--version=raw"}, wantStdout: []string{`setup.BuildInfo{Version:`, `Contract:"v1alpha1"`}},
		{name: "version raw", args: []string{"version", "--version=raw"}, wantStdout: []string{`setup.BuildInfo{`}},
		{name: "--help", args: []string{"--help"}, wantStdout: []string{"CAPTF flags:", "Logging flags:", "--terraformmachinetemplate-concurrency", "--tls-min-version"}},
		{name: "-h", args: []string{"-h"}, wantStdout: []string{"Diagnostics and TLS flags:"}},
		{name: "unknown flag", args: []string{"--zap-devel"}, wantCode: 2, wantStderr: []string{"unknown flag: --zap-devel", "--help"}},
		{name: "invalid values", args: []string{"--runner-image=", "--max-active-jobs=-1", "--tls-min-version=1.3"}, wantCode: 1,
			wantStderr: []string{"--runner-image is empty", "--max-active-jobs (-1)", "--tls-min-version"}},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("CAPTF_MANAGER_IMAGE", "")
			var stdout, stderr strings.Builder
			if code := run(tc.args, &stdout, &stderr); code != tc.wantCode {
				t.Errorf("exit code %d, want %d; stderr %s", code, tc.wantCode, stderr.String())
			}
			for _, s := range tc.wantStdout {
				if !strings.Contains(stdout.String(), s) {
					t.Errorf("stdout lacks %q:\n%s", s, stdout.String())
				}
			}
			for _, s := range tc.wantStderr {
				if !strings.Contains(stderr.String(), s) {
					t.Errorf("stderr lacks %q:\n%s", s, stderr.String())
				}
			}
		})
	}
	var a, b strings.Builder
	run([]string{"--version"}, &a, &b)
	var c strings.Builder
	run([]string{"version"}, &c, &b)
	if a.String() != c.String() {
		t.Errorf("`manager version` printed %q, --version %q; want the same", c.String(), a.String())
	}
}
