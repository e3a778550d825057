package scale_test

import (
	"context"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// The workload controllers, by their controller-runtime names.
const (
	clusterController = "terraformcluster"
	machineController = "terraformmachine"
)

// gathers counts the harness's reads of the metrics registry, whose
// allocations the benchmark takes out of the manager's.
var gathers atomic.Int64

// metricSum adds up the samples of a controller-runtime metric (counter
// or gauge) whose label label is value.
func metricSum(name, label, value string) (float64, error) {
	gathers.Add(1)
	families, err := crmetrics.Registry.Gather()
	if err != nil {
		return 0, err
	}
	sum := 0.0
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == label && l.GetValue() == value {
					sum += m.GetCounter().GetValue() + m.GetGauge().GetValue()
				}
			}
		}
	}
	return sum, nil
}

// reconciles counts the passes controller has finished.
func reconciles(controller string) (int64, error) {
	n, err := metricSum("controller_runtime_reconcile_total", "controller", controller)
	return int64(n), err
}

// reconcileErrors counts the passes of controller that returned an error
// (and were retried with backoff).
func reconcileErrors(controller string) (int64, error) {
	n, err := metricSum("controller_runtime_reconcile_errors_total", "controller", controller)
	return int64(n), err
}

// busy reports whether a workload controller has queued or running work.
func busy() (bool, error) {
	for _, c := range []string{clusterController, machineController} {
		depth, err := metricSum("workqueue_depth", "name", c)
		if err != nil {
			return false, err
		}
		active, err := metricSum("controller_runtime_active_workers", "controller", c)
		if err != nil {
			return false, err
		}
		if depth > 0 || active > 0 {
			return true, nil
		}
	}
	return false, nil
}

// waitQuiet waits until the machine controller has finished at least
// passes passes since it counted from, and then the workload controllers
// stay idle for 1.5 seconds. It returns the passes finished since from.
func waitQuiet(ctx context.Context, from, passes int64, timeout time.Duration) (int64, error) {
	const quietPolls = 3
	var last, done int64 = -1, 0
	stable := 0
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, timeout, false, func(context.Context) (bool, error) {
		n, err := reconciles(machineController)
		if err != nil {
			return false, err
		}
		b, err := busy()
		if err != nil {
			return false, err
		}
		if !b && n == last && n-from >= passes {
			stable++
		} else {
			stable = 0
		}
		last, done = n, n-from
		return stable >= quietPolls, nil
	})
	return done, err
}

// gatherAlloc is what one read of the metrics registry allocates, on
// average over a few reads while the manager idles.
func gatherAlloc() (float64, error) {
	const reads = 4
	before, n := totalAlloc(), gathers.Load()
	for range reads {
		if _, err := busy(); err != nil {
			return 0, err
		}
	}
	return float64(totalAlloc()-before) / float64(gathers.Load()-n), nil
}
