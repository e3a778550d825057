package scale_test

import (
	"context"
	"sync/atomic"
	"time"

	dto "github.com/prometheus/client_model/go"
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

// metricsRead is one read of the metrics registry. Reading it costs the
// process more CPU the more objects the manager has (it sorts every
// series), so a poll reads it once and asks it every question.
type metricsRead []*dto.MetricFamily

func readMetrics() (metricsRead, error) {
	gathers.Add(1)
	return crmetrics.Registry.Gather()
}

// sum adds up the samples of a controller-runtime metric (counter or
// gauge) whose label label is value.
func (r metricsRead) sum(name, label, value string) float64 {
	sum := 0.0
	for _, f := range r {
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
	return sum
}

// reconciles counts the passes controller has finished.
func (r metricsRead) reconciles(controller string) int64 {
	return int64(r.sum("controller_runtime_reconcile_total", "controller", controller))
}

// failures counts the passes of controller that returned an error (and
// were retried with backoff).
func (r metricsRead) failures(controller string) int64 {
	return int64(r.sum("controller_runtime_reconcile_errors_total", "controller", controller))
}

// busy reports whether a workload controller has queued or running work.
func (r metricsRead) busy() bool {
	for _, c := range []string{clusterController, machineController} {
		if r.sum("workqueue_depth", "name", c) > 0 || r.sum("controller_runtime_active_workers", "controller", c) > 0 {
			return true
		}
	}
	return false
}

// reconciles reads the metrics and counts the passes controller has
// finished.
func reconciles(controller string) (int64, error) {
	r, err := readMetrics()
	return r.reconciles(controller), err
}

// reconcileErrors counts the passes of controller that returned an error
// (and were retried with backoff).
func reconcileErrors(controller string) (int64, error) {
	r, err := readMetrics()
	return r.failures(controller), err
}

// busy reads the metrics and reports whether a workload controller has
// queued or running work.
func busy() (bool, error) {
	r, err := readMetrics()
	return r.busy(), err
}

// waitQuiet waits until the machine controller has finished at least
// passes passes since it counted from, and then the workload controllers
// stay idle for 1.5 seconds. It returns the passes finished since from.
func waitQuiet(ctx context.Context, from, passes int64, timeout time.Duration) (int64, error) {
	const quietPolls = 3
	var last, done int64 = -1, 0
	stable := 0
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, timeout, false, func(context.Context) (bool, error) {
		r, err := readMetrics()
		if err != nil {
			return false, err
		}
		n := r.reconciles(machineController)
		if !r.busy() && n == last && n-from >= passes {
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
