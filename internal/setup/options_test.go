package setup

import (
	"crypto/tls"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

// referenceFlags is the operator reference's full flag table (§3.2): name,
// type as --help shows it, default.
var referenceFlags = []struct{ name, typ, def string }{
	// CAPTF
	{"cluster-operation-gate", "bool", "true"},
	{"max-active-jobs", "int", "200"},
	{"cluster-max-active-jobs", "int", "20"},
	{"drift-default-interval", "duration", "30m0s"},
	{"runner-events", "bool", "true"},
	{"runner-image", "string", "ghcr.io/captf-io/cluster-api-provider-terraform:test"},
	{"state-backups", "int", "5"},
	// Controllers
	{"namespace", "string", ""},
	{"sync-period", "duration", "10m0s"},
	{"terraformcluster-concurrency", "int", "10"},
	{"terraformmachine-concurrency", "int", "10"},
	{"terraformmachinepool-concurrency", "int", "10"},
	{"terraformmachinetemplate-concurrency", "int", "10"},
	{"watch-filter", "string", ""},
	// Leader election
	{"leader-elect", "bool", "false"},
	{"leader-elect-lease-duration", "duration", "15s"},
	{"leader-elect-renew-deadline", "duration", "10s"},
	{"leader-elect-retry-period", "duration", "2s"},
	// Webhooks
	{"webhook-cert-dir", "string", "/tmp/k8s-webhook-server/serving-certs/"},
	{"webhook-cert-name", "string", "tls.crt"},
	{"webhook-key-name", "string", "tls.key"},
	{"webhook-port", "int", "9443"},
	// Diagnostics/TLS
	{"diagnostics-address", "string", ":8443"},
	{"insecure-diagnostics", "bool", "false"},
	{"tls-cipher-suites", "stringSlice", "[]"},
	{"tls-curve-preferences", "int32Slice", "[]"},
	{"tls-min-version", "string", "VersionTLS12"},
	// Logging
	{"feature-gates", "mapStringBool", ""},
	{"log-flush-frequency", "duration", "5s"},
	{"log-json-info-buffer-size", "quantity", "0"},
	{"log-json-split-stream", "bool", "false"},
	{"log-text-info-buffer-size", "quantity", "0"},
	{"log-text-split-stream", "bool", "false"},
	{"logging-format", "string", "text"},
	{"v", "Level", "2"},
	{"vmodule", "pattern=N,...", ""},
	// Other
	{"health-addr", "string", ":9440"},
	{"kubeconfig", "string", ""},
	{"profiler-address", "string", ""},
	{"help", "bool", "false"},
	{"version", "version", "false"},
}

func TestEveryReferenceFlagWithItsTypeAndDefault(t *testing.T) {
	t.Setenv("CAPTF_MANAGER_IMAGE", "ghcr.io/captf-io/cluster-api-provider-terraform:test")
	fs := NewCommandLine("manager").FlagSet()
	var want []string
	for _, tc := range referenceFlags {
		want = append(want, tc.name)
		t.Run(tc.name, func(t *testing.T) {
			f := fs.Lookup(tc.name)
			if f == nil {
				t.Fatalf("--%s is not registered", tc.name)
			}
			if f.Value.Type() != tc.typ || f.DefValue != tc.def {
				t.Errorf("--%s is %s, default %q; want %s, default %q", tc.name, f.Value.Type(), f.DefValue, tc.typ, tc.def)
			}
		})
	}
	var got []string
	fs.VisitAll(func(f *pflag.Flag) { got = append(got, f.Name) })
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("flags %v\nwant exactly the reference's %v", got, want)
	}
	for name, short := range map[string]string{"v": "v", "help": "h"} {
		if f := fs.Lookup(name); f.Shorthand != short {
			t.Errorf("--%s has shorthand %q, want -%s", name, f.Shorthand, short)
		}
	}
}

func TestParse(t *testing.T) {
	const image = "--runner-image=ghcr.io/captf-io/cluster-api-provider-terraform:v0.1.0"
	testCases := []struct {
		name    string
		args    []string
		wantErr []string // substrings; empty means it parses
		check   func(t *testing.T, c *CommandLine)
	}{
		{name: "defaults with a runner image", args: []string{image}, check: func(t *testing.T, c *CommandLine) {
			if c.Options.MaxActiveJobs != 200 || c.Options.MachineTemplateConcurrency != 10 || c.Options.TLSMinVersion != "VersionTLS12" {
				t.Errorf("defaults %+v", c.Options)
			}
			if c.Logging.Config.Verbosity != 2 || c.Logging.Config.Format != "text" {
				t.Errorf("logging defaults %+v", c.Logging.Config)
			}
		}},
		{name: "space-separated values and underscores for dashes", args: []string{image, "--sync_period", "5m", "--terraformmachinetemplate_concurrency=3", "-v", "4"},
			check: func(t *testing.T, c *CommandLine) {
				if c.Options.SyncPeriod != 5*time.Minute || c.Options.MachineTemplateConcurrency != 3 || c.Logging.Config.Verbosity != 4 {
					t.Errorf("got sync %s, template concurrency %d, v %d", c.Options.SyncPeriod, c.Options.MachineTemplateConcurrency, c.Logging.Config.Verbosity)
				}
			}},
		{name: "TLS lists", args: []string{image, "--tls-cipher-suites=TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "--tls-curve-preferences=29,23", "--tls-min-version=VersionTLS13"},
			check: func(t *testing.T, c *CommandLine) {
				if len(c.Options.TLSCipherSuites) != 2 || !slices.Equal(c.Options.TLSCurvePreferences, []int32{29, 23}) {
					t.Errorf("got ciphers %v, curves %v", c.Options.TLSCipherSuites, c.Options.TLSCurvePreferences)
				}
			}},
		{name: "json logging", args: []string{image, "--logging-format=json"}},
		{name: "alpha logging option with its gate", args: []string{image, "--feature-gates=LoggingAlphaOptions=true", "--log-text-split-stream"}},
		{name: "--version=vX.Y.Z runs and reports that version", args: []string{image, "--version=v1.2.3"}, check: func(t *testing.T, c *CommandLine) {
			if print, _ := c.Options.Version.Print(); print || c.Options.Build().Version != "v1.2.3" {
				t.Errorf("print %v, version %q; want no print, v1.2.3", print, c.Options.Build().Version)
			}
		}},
		{name: "--version prints even without a runner image", args: []string{"--version"}},
		{name: "--help prints even with invalid values", args: []string{"--help", "--sync-period=0"}},
		{name: "unknown flag", args: []string{image, "--max-jobs=3"}, wantErr: []string{"invalid command line", "--max-jobs"}},
		{name: "unparsable value", args: []string{image, "--max-active-jobs=many"}, wantErr: []string{"invalid command line", "--max-active-jobs"}},
		{name: "unknown feature gate", args: []string{image, "--feature-gates=CAPTFFoo=true"}, wantErr: []string{"--feature-gates"}},
		{name: "bad version value", args: []string{"--version=latest"}, wantErr: []string{"--version", "v1.2.3"}},
		{name: "stray argument", args: []string{image, "start"}, wantErr: []string{`unexpected argument "start"`}},
		{name: "unknown logging format", args: []string{image, "--logging-format=xml"}, wantErr: []string{"--logging-format", "text or json"}},
		{name: "alpha logging option without its gate", args: []string{image, "--log-json-split-stream"}, wantErr: []string{"--log-json-split-stream", "--feature-gates=LoggingAlphaOptions=true"}},
		{name: "alpha buffer without its gate", args: []string{image, "--log-text-info-buffer-size=1Ki"}, wantErr: []string{"--log-text-info-buffer-size", "LoggingAlphaOptions"}},
		{name: "vmodule with json", args: []string{image, "--logging-format=json", "--vmodule=foo=3"}, wantErr: []string{"--vmodule"}},
		{name: "zero flush frequency", args: []string{image, "--log-flush-frequency=0s"}, wantErr: []string{"--log-flush-frequency"}},
		{name: "option values are validated too", args: []string{image, "--state-backups=-1"}, wantErr: []string{"--state-backups"}},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			c := NewCommandLine("manager")
			err := c.Parse(tc.args)
			if len(tc.wantErr) == 0 {
				if err != nil {
					t.Fatalf("Parse(%v): %v", tc.args, err)
				}
				if tc.check != nil {
					tc.check(t, c)
				}
				return
			}
			if err == nil {
				t.Fatalf("Parse(%v) accepted, want an error with %q", tc.args, tc.wantErr)
			}
			for _, s := range tc.wantErr {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not contain %q", err, s)
				}
			}
		})
	}
}

func TestValidate(t *testing.T) {
	testCases := []struct {
		name    string
		mutate  func(o *Options)
		wantErr string // substring naming the flag; empty means valid
	}{
		{name: "defaults", mutate: func(*Options) {}},
		{name: "no caps", mutate: func(o *Options) { o.MaxActiveJobs, o.ClusterMaxActiveJobs, o.StateBackups = 0, 0, 0 }},
		{name: "digest-pinned runner image", mutate: func(o *Options) {
			o.RunnerImage = "ghcr.io/captf-io/cluster-api-provider-terraform@sha256:" + strings.Repeat("ab", 32)
		}},
		{name: "registry with port", mutate: func(o *Options) { o.RunnerImage = "localhost:5000/captf/manager:dev" }},
		{name: "profiler address", mutate: func(o *Options) { o.ProfilerAddress = "localhost:6060" }},
		{name: "zero sync period", mutate: func(o *Options) { o.SyncPeriod = 0 }, wantErr: "--sync-period must be positive"},
		{name: "negative drift interval", mutate: func(o *Options) { o.DriftDefaultInterval = -time.Second }, wantErr: "--drift-default-interval must be positive"},
		{name: "negative state backups", mutate: func(o *Options) { o.StateBackups = -1 }, wantErr: "--state-backups must not be negative"},
		{name: "negative max active jobs", mutate: func(o *Options) { o.MaxActiveJobs = -1 }, wantErr: "--max-active-jobs"},
		{name: "negative cluster max active jobs", mutate: func(o *Options) { o.ClusterMaxActiveJobs = -5 }, wantErr: "--cluster-max-active-jobs (-5)"},
		{name: "cluster concurrency 0", mutate: func(o *Options) { o.ClusterConcurrency = 0 }, wantErr: "--terraformcluster-concurrency must be at least 1"},
		{name: "machine concurrency 0", mutate: func(o *Options) { o.MachineConcurrency = 0 }, wantErr: "--terraformmachine-concurrency must be at least 1"},
		{name: "pool concurrency 0", mutate: func(o *Options) { o.MachinePoolConcurrency = -1 }, wantErr: "--terraformmachinepool-concurrency must be at least 1"},
		{name: "template concurrency 0", mutate: func(o *Options) { o.MachineTemplateConcurrency = 0 }, wantErr: "--terraformmachinetemplate-concurrency must be at least 1"},
		{name: "empty runner image", mutate: func(o *Options) { o.RunnerImage = "" }, wantErr: "--runner-image is empty: set --runner-image or $CAPTF_MANAGER_IMAGE"},
		{name: "runner image with spaces", mutate: func(o *Options) { o.RunnerImage = "my image" }, wantErr: "--runner-image \"my image\" is not an image reference"},
		{name: "runner image with upper-case path", mutate: func(o *Options) { o.RunnerImage = "ghcr.io/CAPTF/manager" }, wantErr: "is not an image reference"},
		{name: "runner image with an empty tag", mutate: func(o *Options) { o.RunnerImage = "ghcr.io/captf/manager:" }, wantErr: "is not an image reference"},
		{name: "webhook port 0", mutate: func(o *Options) { o.WebhookPort = 0 }, wantErr: "--webhook-port must be a port number"},
		{name: "renew deadline not shorter than lease", mutate: func(o *Options) {
			o.LeaderElect, o.LeaderElectRenewDeadline = true, 15*time.Second
		}, wantErr: "--leader-elect-renew-deadline (15s) must be shorter than --leader-elect-lease-duration (15s)"},
		{name: "unknown TLS version", mutate: func(o *Options) { o.TLSMinVersion = "TLS1.2" }, wantErr: "--tls-min-version: unknown tls version \"TLS1.2\"; use one of VersionTLS10"},
		{name: "unknown cipher", mutate: func(o *Options) { o.TLSCipherSuites = []string{"TLS_NOPE"} }, wantErr: "--tls-cipher-suites"},
		{name: "unknown curve", mutate: func(o *Options) { o.TLSCurvePreferences = []int32{7} }, wantErr: "--tls-curve-preferences"},
		{name: "duplicate curve", mutate: func(o *Options) { o.TLSCurvePreferences = []int32{29, 29} }, wantErr: "--tls-curve-preferences: duplicate"},
		{name: "profiler address without port", mutate: func(o *Options) { o.ProfilerAddress = "localhost" }, wantErr: "--profiler-address \"localhost\" is not host:port"},
		{name: "profiler address with a bad port", mutate: func(o *Options) { o.ProfilerAddress = ":http" }, wantErr: "--profiler-address \":http\" has no port number"},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			o := Defaults()
			o.RunnerImage = "ghcr.io/captf-io/cluster-api-provider-terraform:v0.1.0"
			tc.mutate(&o)
			err := o.Validate()
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("Validate: %v", err)
			case tc.wantErr != "" && err == nil:
				t.Fatalf("Validate accepted, want %q", tc.wantErr)
			case tc.wantErr != "" && !strings.Contains(err.Error(), tc.wantErr):
				t.Errorf("error %q does not contain %q", err, tc.wantErr)
			}
		})
	}
}

func TestTLSOptionsConfigureTheServers(t *testing.T) {
	o := Defaults()
	c := tlsConfig(t, o)
	if c.MinVersion != tls.VersionTLS12 || c.CipherSuites != nil || c.CurvePreferences != nil {
		t.Errorf("defaults give %+v, want TLS 1.2 and Go's cipher and curve defaults", c)
	}
	o.TLSMinVersion = "VersionTLS13"
	o.TLSCipherSuites = []string{"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"}
	o.TLSCurvePreferences = []int32{int32(tls.X25519)}
	c = tlsConfig(t, o)
	if c.MinVersion != tls.VersionTLS13 || !slices.Equal(c.CipherSuites, []uint16{tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384}) ||
		!slices.Equal(c.CurvePreferences, []tls.CurveID{tls.X25519}) {
		t.Errorf("got %+v", c)
	}
}

func tlsConfig(t *testing.T, o Options) *tls.Config {
	t.Helper()
	opts, err := o.TLSOptions()
	if err != nil {
		t.Fatal(err)
	}
	c := &tls.Config{}
	for _, f := range opts {
		f(c)
	}
	return c
}

func TestVersionFlag(t *testing.T) {
	testCases := []struct {
		set             string
		wantErr         bool
		print, raw      bool
		override, shown string
	}{
		{set: "false", shown: "false"},
		{set: "true", print: true, shown: "true"},
		{set: "1", print: true, shown: "true"},
		{set: "raw", print: true, raw: true, shown: "raw"},
		{set: "v0.2.0", override: "v0.2.0", shown: "v0.2.0"},
		{set: "v0.2.0-rc.1+abc", override: "v0.2.0-rc.1+abc", shown: "v0.2.0-rc.1+abc"},
		{set: "v0.2", wantErr: true},
		{set: "latest", wantErr: true},
	}
	for _, tc := range testCases {
		t.Run(tc.set, func(t *testing.T) {
			var v VersionFlag
			err := v.Set(tc.set)
			if (err != nil) != tc.wantErr {
				t.Fatalf("Set(%q) = %v, want error %v", tc.set, err, tc.wantErr)
			}
			if tc.wantErr {
				return
			}
			print, raw := v.Print()
			if print != tc.print || raw != tc.raw || v.Override() != tc.override || v.String() != tc.shown {
				t.Errorf("print %v raw %v override %q shown %q", print, raw, v.Override(), v.String())
			}
		})
	}
}

func TestBuildInfo(t *testing.T) {
	b := Build()
	if b.Contract != "v1alpha1" || b.GoVersion == "" || b.Version == "" || b.Commit == "" {
		t.Errorf("Build() = %+v, want every field set and contract v1alpha1", b)
	}
	if s := b.String(); !strings.HasPrefix(s, "CAPTF manager "+b.Version) || !strings.Contains(s, b.GoVersion) {
		t.Errorf("String() = %q", s)
	}
	if r := b.Raw(); !strings.Contains(r, `Contract:"v1alpha1"`) {
		t.Errorf("Raw() = %q", r)
	}
}

func TestHelpPrintsTheGroups(t *testing.T) {
	var out strings.Builder
	NewCommandLine("manager").Usage(&out, "manager")
	groups := []string{GroupCAPTF, GroupControllers, GroupLeader, GroupWebhooks, GroupDiagnostics, GroupLogging, GroupOther}
	last := -1
	for _, g := range groups {
		i := strings.Index(out.String(), "\n"+g+" flags:")
		if i < 0 || i < last {
			t.Errorf("group %q missing or out of order in\n%s", g, out.String())
		}
		last = i
	}
}
