package setup

import (
	"testing"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
)

// A configuration without rate limits (a --kubeconfig, or in-cluster once
// controller-runtime's defaults are cleared) gets the manager's; one that
// sets its own keeps them; the caller's configuration is never changed.
func TestRateLimits(t *testing.T) {
	limiter := flowcontrol.NewFakeAlwaysRateLimiter()
	testCases := []struct {
		name      string
		cfg       rest.Config
		wantQPS   float32
		wantBurst int
	}{
		{"none set", rest.Config{}, DefaultQPS, DefaultBurst},
		{"own limits kept", rest.Config{QPS: 7, Burst: 9}, 7, 9},
		{"own rate limiter kept", rest.Config{RateLimiter: limiter}, 0, 0},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.cfg
			got := withRateLimits(&in)
			if got.QPS != tc.wantQPS || got.Burst != tc.wantBurst {
				t.Errorf("QPS %v, burst %d; want %v, %d", got.QPS, got.Burst, tc.wantQPS, tc.wantBurst)
			}
			if in.QPS != tc.cfg.QPS || in.Burst != tc.cfg.Burst {
				t.Errorf("the caller's configuration changed to QPS %v, burst %d", in.QPS, in.Burst)
			}
		})
	}
}
