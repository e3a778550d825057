package setup

import (
	"errors"
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"
)

// Validate refuses options the manager cannot start with. Every error
// names the flag, the value and what to do.
func (o *Options) Validate() error {
	var errs []error
	if o.SyncPeriod <= 0 {
		errs = append(errs, fmt.Errorf("--sync-period must be positive, got %s", o.SyncPeriod))
	}
	if o.WebhookPort < 1 || o.WebhookPort > 65535 {
		errs = append(errs, fmt.Errorf("--webhook-port must be a port number (1-65535), got %d", o.WebhookPort))
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
	for _, c := range []struct {
		kind string
		n    int
	}{
		{"terraformcluster", o.ClusterConcurrency}, {"terraformmachine", o.MachineConcurrency},
		{"terraformmachinepool", o.MachinePoolConcurrency}, {"terraformmachinetemplate", o.MachineTemplateConcurrency},
	} {
		if c.n < 1 {
			errs = append(errs, fmt.Errorf("--%s-concurrency must be at least 1, got %d", c.kind, c.n))
		}
	}
	if err := validRunnerImage(o.RunnerImage); err != nil {
		errs = append(errs, err)
	}
	if o.LeaderElect && o.LeaderElectRenewDeadline >= o.LeaderElectLeaseDuration {
		errs = append(errs, fmt.Errorf("--leader-elect-renew-deadline (%s) must be shorter than --leader-elect-lease-duration (%s)",
			o.LeaderElectRenewDeadline, o.LeaderElectLeaseDuration))
	}
	if _, err := o.TLSOptions(); err != nil {
		errs = append(errs, err)
	}
	if o.ProfilerAddress != "" {
		if err := validAddress(o.ProfilerAddress); err != nil {
			errs = append(errs, fmt.Errorf("--profiler-address %q %w, e.g. localhost:6060; leave it empty to serve no profiler", o.ProfilerAddress, err))
		}
	}
	return errors.Join(errs...)
}

// imageReference is the grammar of an image reference: an optional
// registry host[:port], lower-case path components, an optional tag and an
// optional digest.
var imageReference = regexp.MustCompile(`^(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*(?::[0-9]+)?/)?` +
	`[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*)*` +
	`(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(?:@[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[a-zA-Z0-9=_-]{32,})?$`)

// validRunnerImage checks the shape of the runner image reference; whether
// it holds /runner is only known when a Job runs.
func validRunnerImage(image string) error {
	const fix = "set --runner-image or $CAPTF_MANAGER_IMAGE to the manager image, whose /runner the Jobs copy"
	switch {
	case image == "":
		return errors.New("--runner-image is empty: " + fix)
	case len(image) > 4096 || !imageReference.MatchString(image):
		return fmt.Errorf("--runner-image %q is not an image reference: %s", image, fix)
	}
	return nil
}

// validAddress checks a listen address: host:port with a port number.
func validAddress(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return errors.New("is not host:port")
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return errors.New("has no port number")
	}
	return nil
}

// tlsFlagError names the TLS flag behind a component-base parse error.
func tlsFlagError(flag string, err error, hint string) error {
	return fmt.Errorf("--%s: %w; %s", flag, err, hint)
}

// possible lists the values a TLS flag takes, for its error message.
func possible(values []string) string {
	return "use one of " + strings.Join(values, ", ")
}
