// Package setup builds the CAPTF manager from its command line: the
// controller-runtime manager (leader election, health probes, the
// authenticated diagnostics endpoint, the webhook server, TLS settings of
// both), the caches (Secret data is never cached) and every controller and
// webhook. cmd/manager and the integration tests start the manager the same
// way, through Run.
package setup

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"
	cliflag "k8s.io/component-base/cli/flag"

	"captf.io/captf/internal/imagemeta"
)

// Options are the manager's flags, all but the process-wide logging flags
// (LoggingOptions) and --help (CommandLine).
type Options struct {
	LeaderElect              bool
	LeaderElectLeaseDuration time.Duration
	LeaderElectRenewDeadline time.Duration
	LeaderElectRetryPeriod   time.Duration
	HealthAddr               string
	DiagnosticsAddress       string
	InsecureDiagnostics      bool
	WebhookPort              int
	WebhookCertDir           string
	WebhookCertName          string
	WebhookKeyName           string
	SyncPeriod               time.Duration
	Namespace                string
	Kubeconfig               string

	// TLS of the webhook and secure diagnostics servers.
	TLSMinVersion       string
	TLSCipherSuites     []string
	TLSCurvePreferences []int32
	// ProfilerAddress, when set, serves pprof on a listener of its own.
	ProfilerAddress string
	// Version is --version: print and exit, or override the reported version.
	Version VersionFlag

	DriftDefaultInterval   time.Duration
	MaxActiveJobs          int
	StateBackups           int
	ClusterOperationGate   bool
	WatchFilter            string
	ClusterMaxActiveJobs   int
	RunnerEvents           bool
	RunnerImage            string
	ClusterConcurrency     int
	MachineConcurrency     int
	MachinePoolConcurrency int
	// MachineTemplateConcurrency is --terraformmachinetemplate-concurrency,
	// for the TerraformMachineTemplate capacity controller.
	MachineTemplateConcurrency int

	// ImageLabels, not a flag, reads module images' labels; nil reads them
	// from the images' registries, anonymously, each answer kept five
	// minutes. The local environment serves its image store's.
	ImageLabels imagemeta.Reader
	// CrashOnPanic, not a flag, lets a panic in a controller's pass end
	// the process (controller-runtime recovers and logs it otherwise): the
	// tests set it, so that no panic goes unnoticed.
	CrashOnPanic bool
}

// LeaderElectionID is the leader election Lease, in the manager's namespace.
const LeaderElectionID = "controller-leader-election-captf"

// leaderElectionID is the Lease this manager elects its leader on: one per
// shard, so that managers of different --watch-filter values each have a
// leader (with one Lease only one of them would ever work).
func (o Options) leaderElectionID() string {
	if o.WatchFilter == "" {
		return LeaderElectionID
	}
	sum := sha256.Sum256([]byte(o.WatchFilter))
	return LeaderElectionID + "-" + hex.EncodeToString(sum[:5])
}

// Flag groups, in the order --help prints them.
const (
	GroupCAPTF       = "CAPTF"
	GroupControllers = "Controllers"
	GroupLeader      = "Leader election"
	GroupWebhooks    = "Webhooks"
	GroupDiagnostics = "Diagnostics and TLS"
	GroupLogging     = "Logging"
	GroupOther       = "Other"
)

// Defaults returns the options every flag defaults to.
func Defaults() Options {
	var o Options
	o.AddFlags(pflag.NewFlagSet("defaults", pflag.ContinueOnError))
	return o
}

// AddFlags registers the manager's flags with their documented defaults.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	var nfs cliflag.NamedFlagSets
	o.AddNamedFlagSets(&nfs)
	for _, name := range nfs.Order {
		fs.AddFlagSet(nfs.FlagSets[name])
	}
}

// AddNamedFlagSets registers the manager's flags in their --help groups.
func (o *Options) AddNamedFlagSets(nfs *cliflag.NamedFlagSets) {
	o.addCAPTFFlags(nfs.FlagSet(GroupCAPTF))
	o.addControllerFlags(nfs.FlagSet(GroupControllers))

	fs := nfs.FlagSet(GroupLeader)
	fs.BoolVar(&o.LeaderElect, "leader-elect", false, "Elect a leader among the replicas; only the leader reconciles, all serve webhooks. The Lease is "+LeaderElectionID+" in $POD_NAMESPACE.")
	fs.DurationVar(&o.LeaderElectLeaseDuration, "leader-elect-lease-duration", 15*time.Second, "How long a standby waits before taking over a lease whose holder stopped renewing.")
	fs.DurationVar(&o.LeaderElectRenewDeadline, "leader-elect-renew-deadline", 10*time.Second, "How long the leader retries renewing before giving up leadership; shorter than the lease duration.")
	fs.DurationVar(&o.LeaderElectRetryPeriod, "leader-elect-retry-period", 2*time.Second, "How often candidates retry acquiring or renewing leadership.")

	fs = nfs.FlagSet(GroupWebhooks)
	fs.StringVar(&o.WebhookCertDir, "webhook-cert-dir", "/tmp/k8s-webhook-server/serving-certs/", "Directory of the webhook server's certificate and key.")
	fs.StringVar(&o.WebhookCertName, "webhook-cert-name", "tls.crt", "Webhook server certificate file name.")
	fs.StringVar(&o.WebhookKeyName, "webhook-key-name", "tls.key", "Webhook server key file name.")
	fs.IntVar(&o.WebhookPort, "webhook-port", 9443, "Port of the admission webhook server (the webhook Service targets it).")

	fs = nfs.FlagSet(GroupDiagnostics)
	fs.StringVar(&o.DiagnosticsAddress, "diagnostics-address", ":8443", "Address of the diagnostics endpoint: /metrics over HTTPS with authentication and authorization, plus /debug/pprof/ and PUT /debug/flags/v (unless --insecure-diagnostics); 0 disables it.")
	fs.BoolVar(&o.InsecureDiagnostics, "insecure-diagnostics", false, "Serve /metrics over plain HTTP without authentication, and no pprof or log-level endpoints.")
	fs.StringSliceVar(&o.TLSCipherSuites, "tls-cipher-suites", []string{}, "Comma-separated cipher suites of the webhook and secure diagnostics servers; empty uses Go's defaults. Possible values: "+strings.Join(cliflag.TLSCipherPossibleValues(), ", ")+".")
	fs.Int32SliceVar(&o.TLSCurvePreferences, "tls-curve-preferences", []int32{}, "Comma-separated numeric Go tls.CurveID values the webhook and secure diagnostics servers accept for key exchange (order ignored); empty uses Go's defaults.")
	fs.StringVar(&o.TLSMinVersion, "tls-min-version", "VersionTLS12", "Minimum TLS version of the webhook and secure diagnostics servers. Possible values: "+strings.Join(cliflag.TLSPossibleVersions(), ", ")+".")

	fs = nfs.FlagSet(GroupOther)
	fs.StringVar(&o.HealthAddr, "health-addr", ":9440", "Address of /healthz and /readyz.")
	fs.StringVar(&o.Kubeconfig, "kubeconfig", "", "Kubeconfig of the management cluster; else $KUBECONFIG, else in-cluster.")
	fs.StringVar(&o.ProfilerAddress, "profiler-address", "", "Address of a separate pprof listener (/debug/pprof/, no authentication), e.g. localhost:6060; empty serves none.")
	fs.Var(&o.Version, "version", "--version, --version=raw prints version information and quits; --version=vX.Y.Z... sets the reported version.")
	fs.Lookup("version").NoOptDefVal = "true"
}

func (o *Options) addCAPTFFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.ClusterOperationGate, "cluster-operation-gate", true, "Keep a TerraformCluster's apply, destroy and restore from overlapping its machines' and pools' (a per-Cluster write Lease).")
	fs.IntVar(&o.ClusterMaxActiveJobs, "cluster-max-active-jobs", 20, "Most Jobs running at once for one cluster (its TerraformCluster, machines and pools) unless its spec.maxActiveJobs says otherwise; 0 means no cap.")
	fs.DurationVar(&o.DriftDefaultInterval, "drift-default-interval", 30*time.Minute, "Drift interval of objects that set none (a pool whose interval is 0 uses it too); must be positive.")
	fs.IntVar(&o.MaxActiveJobs, "max-active-jobs", 200, "Most Jobs running at once across the manager; 0 means no cap.")
	fs.BoolVar(&o.RunnerEvents, "runner-events", true, "Let the runner post progress events on the object (needs events.k8s.io create in the runner's role).")
	fs.StringVar(&o.RunnerImage, "runner-image", os.Getenv("CAPTF_MANAGER_IMAGE"), "Image of the Jobs' init container that supplies /runner (default $CAPTF_MANAGER_IMAGE).")
	fs.IntVar(&o.StateBackups, "state-backups", 5, "State backup sets kept per object; 0 takes none (existing ones stay restorable).")
}

func (o *Options) addControllerFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Namespace, "namespace", "", "Watch this namespace only (identities are always watched cluster-wide); empty watches all.")
	fs.DurationVar(&o.SyncPeriod, "sync-period", 10*time.Minute, "Informer resync and orphan sweep period: how late at the latest a rotated credential reaches its mirrors; must be positive.")
	fs.IntVar(&o.ClusterConcurrency, "terraformcluster-concurrency", 10, "TerraformClusters reconciled at once (at least 1).")
	fs.IntVar(&o.MachineConcurrency, "terraformmachine-concurrency", 10, "TerraformMachines reconciled at once (at least 1).")
	fs.IntVar(&o.MachinePoolConcurrency, "terraformmachinepool-concurrency", 10, "TerraformMachinePools reconciled at once (at least 1).")
	fs.IntVar(&o.MachineTemplateConcurrency, "terraformmachinetemplate-concurrency", 10, "TerraformMachineTemplates reconciled at once (at least 1).")
	fs.StringVar(&o.WatchFilter, "watch-filter", "", "Reconcile only objects labelled cluster.x-k8s.io/watch-filter=<value>; empty reconciles all.")
}
