// Package setup builds the CAPTF manager from its command line: the
// controller-runtime manager (leader election, health probes, the
// authenticated metrics endpoint, the webhook server), the caches (Secret
// data is never cached) and every controller and webhook. cmd/manager and
// the integration tests start the manager the same way, through Run.
package setup

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/pflag"
)

// Options are the manager's flags.
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
}

// LeaderElectionID is the leader election Lease, in the manager's namespace.
const LeaderElectionID = "controller-leader-election-captf"

// Defaults returns the options every flag defaults to.
func Defaults() Options {
	var o Options
	o.AddFlags(pflag.NewFlagSet("defaults", pflag.ContinueOnError))
	return o
}

// AddFlags registers the manager's flags with their documented defaults.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.LeaderElect, "leader-elect", false, "Elect a leader among the replicas; only the leader reconciles, all serve webhooks.")
	fs.DurationVar(&o.LeaderElectLeaseDuration, "leader-elect-lease-duration", 15*time.Second, "How long a standby waits before taking over a lease whose holder stopped renewing.")
	fs.DurationVar(&o.LeaderElectRenewDeadline, "leader-elect-renew-deadline", 10*time.Second, "How long the leader retries renewing before giving up leadership.")
	fs.DurationVar(&o.LeaderElectRetryPeriod, "leader-elect-retry-period", 2*time.Second, "How often candidates retry acquiring or renewing leadership.")
	fs.StringVar(&o.HealthAddr, "health-addr", ":9440", "Address of /healthz and /readyz.")
	fs.StringVar(&o.DiagnosticsAddress, "diagnostics-address", ":8443", "Address of /metrics (HTTPS with authentication and authorization unless --insecure-diagnostics); 0 disables it.")
	fs.BoolVar(&o.InsecureDiagnostics, "insecure-diagnostics", false, "Serve /metrics over plain HTTP without authentication.")
	fs.IntVar(&o.WebhookPort, "webhook-port", 9443, "Port of the admission webhook server.")
	fs.StringVar(&o.WebhookCertDir, "webhook-cert-dir", "/tmp/k8s-webhook-server/serving-certs/", "Directory of the webhook server's certificate and key.")
	fs.StringVar(&o.WebhookCertName, "webhook-cert-name", "tls.crt", "Webhook server certificate file name.")
	fs.StringVar(&o.WebhookKeyName, "webhook-key-name", "tls.key", "Webhook server key file name.")
	fs.DurationVar(&o.SyncPeriod, "sync-period", 10*time.Minute, "Informer resync period: how late at the latest a rotated credential reaches its mirrors.")
	fs.StringVar(&o.Namespace, "namespace", "", "Watch this namespace only (identities are always watched cluster-wide); empty watches all.")
	fs.StringVar(&o.Kubeconfig, "kubeconfig", "", "Kubeconfig of the management cluster; else $KUBECONFIG, else in-cluster.")
	fs.DurationVar(&o.DriftDefaultInterval, "drift-default-interval", 30*time.Minute, "Drift interval of objects that set none (a pool whose interval is 0 uses it too).")
	fs.IntVar(&o.MaxActiveJobs, "max-active-jobs", 200, "Most Jobs running at once across the manager; 0 means no cap.")
	fs.IntVar(&o.ClusterMaxActiveJobs, "cluster-max-active-jobs", 20, "Most Jobs running at once for one cluster (its TerraformCluster, machines and pools) unless its spec.maxActiveJobs says otherwise; 0 means no cap.")
	fs.StringVar(&o.WatchFilter, "watch-filter", "", "Reconcile only objects labelled cluster.x-k8s.io/watch-filter=<value>; empty reconciles all.")
	fs.BoolVar(&o.ClusterOperationGate, "cluster-operation-gate", true, "Keep a TerraformCluster's apply, destroy and restore from overlapping its machines' and pools' (a per-Cluster write Lease).")
	fs.IntVar(&o.StateBackups, "state-backups", 5, "State backup sets kept per object; 0 takes none (existing ones stay restorable).")
	fs.BoolVar(&o.RunnerEvents, "runner-events", true, "Let the runner post progress events on the object (needs events.k8s.io create in the runner's role).")
	fs.StringVar(&o.RunnerImage, "runner-image", os.Getenv("CAPTF_MANAGER_IMAGE"), "Image of the Jobs' init container that supplies /runner (default $CAPTF_MANAGER_IMAGE).")
	fs.IntVar(&o.ClusterConcurrency, "terraformcluster-concurrency", 10, "TerraformClusters reconciled at once.")
	fs.IntVar(&o.MachineConcurrency, "terraformmachine-concurrency", 10, "TerraformMachines reconciled at once.")
	fs.IntVar(&o.MachinePoolConcurrency, "terraformmachinepool-concurrency", 10, "TerraformMachinePools reconciled at once.")
}

// Validate refuses options the manager cannot start with.
func (o *Options) Validate() error {
	var errs []error
	if o.SyncPeriod <= 0 {
		errs = append(errs, fmt.Errorf("--sync-period must be positive, got %s", o.SyncPeriod))
	}
	if o.WebhookPort < 1 || o.WebhookPort > 65535 {
		errs = append(errs, fmt.Errorf("--webhook-port must be a port number, got %d", o.WebhookPort))
	}
	if o.StateBackups < 0 {
		errs = append(errs, fmt.Errorf("--state-backups must not be negative, got %d; 0 takes no backups", o.StateBackups))
	}
	if o.MaxActiveJobs < 0 || o.ClusterMaxActiveJobs < 0 {
		errs = append(errs, fmt.Errorf("--max-active-jobs (%d) and --cluster-max-active-jobs (%d) must not be negative; 0 means no cap", o.MaxActiveJobs, o.ClusterMaxActiveJobs))
	}
	if o.DriftDefaultInterval <= 0 {
		errs = append(errs, fmt.Errorf("--drift-default-interval must be positive, got %s", o.DriftDefaultInterval))
	}
	for name, n := range map[string]int{"terraformcluster": o.ClusterConcurrency, "terraformmachine": o.MachineConcurrency, "terraformmachinepool": o.MachinePoolConcurrency} {
		if n < 1 {
			errs = append(errs, fmt.Errorf("--%s-concurrency must be at least 1, got %d", name, n))
		}
	}
	if o.RunnerImage == "" {
		errs = append(errs, errors.New("--runner-image is empty: set it or $CAPTF_MANAGER_IMAGE to the manager image, whose /runner the Jobs copy"))
	}
	if o.LeaderElect && o.LeaderElectRenewDeadline >= o.LeaderElectLeaseDuration {
		errs = append(errs, fmt.Errorf("--leader-elect-renew-deadline (%s) must be shorter than --leader-elect-lease-duration (%s)",
			o.LeaderElectRenewDeadline, o.LeaderElectLeaseDuration))
	}
	return errors.Join(errs...)
}
