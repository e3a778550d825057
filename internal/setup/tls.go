package setup

import (
	"crypto/tls"
	"errors"

	cliflag "k8s.io/component-base/cli/flag"
)

// TLSOptions are the --tls-* flags as TLS settings of the webhook and
// secure diagnostics servers. An empty cipher or curve list keeps Go's
// defaults (Go ignores cipher suites for TLS 1.3, and the curve order).
func (o *Options) TLSOptions() ([]func(*tls.Config), error) {
	var errs []error
	minVersion, err := cliflag.TLSVersion(o.TLSMinVersion)
	if err != nil {
		errs = append(errs, tlsFlagError("tls-min-version", err, possible(cliflag.TLSPossibleVersions())))
	}
	ciphers, err := cliflag.TLSCipherSuites(o.TLSCipherSuites)
	if err != nil {
		errs = append(errs, tlsFlagError("tls-cipher-suites", err, "use names listed by --help, or leave it empty for Go's defaults"))
	}
	curves, err := cliflag.TLSCurvePreferences(o.TLSCurvePreferences)
	if err != nil {
		errs = append(errs, tlsFlagError("tls-curve-preferences", err, "use numeric Go tls.CurveID values such as 29 (X25519) or 23 (P-256), or leave it empty for Go's defaults"))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return []func(*tls.Config){func(c *tls.Config) {
		c.MinVersion = minVersion
		if len(ciphers) > 0 {
			c.CipherSuites = ciphers
		}
		if len(curves) > 0 {
			c.CurvePreferences = curves
		}
	}}, nil
}
