package devenv

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"captf.io/captf/internal/setup"
)

// `captf-dev manager` defaults to what `up` gives its own manager, and the
// manager's flags given on its command line win.
func TestParseManagerCommand(t *testing.T) {
	c, err := ParseManagerCommand(nil, "/state")
	if err != nil {
		t.Fatal(err)
	}
	o := c.cl.Options
	if o.Kubeconfig != "/state/kubeconfig" || o.RunnerImage != RunnerImage || o.DiagnosticsAddress != "0" ||
		o.WebhookCertDir != "" || o.LeaderElect || !strings.HasPrefix(o.HealthAddr, "127.0.0.1:") || o.WebhookPort < 1 {
		t.Errorf("defaults: %+v", o)
	}

	c, err = ParseManagerCommand([]string{"--kubeconfig", "k", "--webhook-port", "9555", "--webhook-cert-dir", "/certs",
		"--leader-elect", "--leader-elect-lease-duration", "6s", "--leader-elect-renew-deadline", "4s"}, "/state")
	if err != nil {
		t.Fatal(err)
	}
	o = c.cl.Options
	if o.Kubeconfig != "k" || o.WebhookPort != 9555 || o.WebhookCertDir != "/certs" || !o.LeaderElect {
		t.Errorf("given flags: %+v", o)
	}

	if _, err := ParseManagerCommand([]string{"extra"}, "/state"); !errors.Is(err, setup.ErrUsage) {
		t.Errorf("an argument: %v, want a usage error", err)
	}
	c, err = ParseManagerCommand([]string{"version"}, "/state")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := c.Run(context.Background(), &out); err != nil || !strings.Contains(out.String(), "module contract") {
		t.Errorf("version printed %q, %v", out.String(), err)
	}
}
