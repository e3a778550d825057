package custody

import (
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// t0 is the tests' now.
var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// TestLockSince: a lock's holder was last known alive when it took the
// lock, or later when its run lease still names its Job.
func TestLockSince(t *testing.T) {
	const job = "captf-c-demo-apply-a2-0a1b2c"
	info := LockInfo{Created: t0.Add(-time.Hour).Format(time.RFC3339Nano)}
	runLease := func(holder string, renewedAgo time.Duration) *coordinationv1.Lease {
		return &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(holder), LeaseDurationSeconds: ptr.To[int32](100),
			RenewTime: ptr.To(metav1.NewMicroTime(t0.Add(-renewedAgo)))}}
	}
	testCases := []struct {
		name         string
		info         LockInfo
		lease        *coordinationv1.Lease
		wantAgo      time.Duration // 0: unknown
		wantDuration time.Duration
	}{
		{"no run lease: the lock's creation and the deadline's backstop", info, nil, time.Hour, 4500 * time.Second},
		{"the run lease names another Job", info, runLease("captf-c-demo-apply-a3-0a1b2c", time.Minute), time.Hour, 4500 * time.Second},
		{"the run lease renewed after the lock", info, runLease(job, time.Minute), time.Minute, 100 * time.Second},
		{"the run lease renewed before the lock", info, runLease(job, 2*time.Hour), time.Hour, 100 * time.Second},
		{"no creation time", LockInfo{}, nil, 0, 4500 * time.Second},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			since, d := LockSince(tc.info, tc.lease, job, 3600)
			var wantSince time.Time
			if tc.wantAgo != 0 {
				wantSince = t0.Add(-tc.wantAgo)
			}
			if !since.Equal(wantSince) || d != tc.wantDuration {
				t.Errorf("LockSince = %v, %v; want %v, %v", since, d, wantSince, tc.wantDuration)
			}
		})
	}
}
