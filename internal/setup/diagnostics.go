package setup

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"net/http/pprof"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/component-base/logs"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/jobs"
	"captf.io/captf/internal/metrics"
)

// diagnosticsOptions is the diagnostics endpoint: /metrics, and in secure
// mode (HTTPS, every request authenticated by TokenReview and authorized
// by SubjectAccessReview for its path and verb) also pprof under
// /debug/pprof/ and the log level at PUT /debug/flags/v.
func (o *Options) diagnosticsOptions(tlsOpts []func(*tls.Config)) metricsserver.Options {
	m := metricsserver.Options{BindAddress: o.DiagnosticsAddress, SecureServing: !o.InsecureDiagnostics}
	if o.InsecureDiagnostics {
		return m
	}
	m.TLSOpts = tlsOpts
	m.FilterProvider = filters.WithAuthenticationAndAuthorization
	m.ExtraHandlers = map[string]http.Handler{
		"/debug/pprof/":        http.HandlerFunc(pprof.Index),
		"/debug/pprof/cmdline": http.HandlerFunc(pprof.Cmdline),
		"/debug/pprof/profile": http.HandlerFunc(pprof.Profile),
		"/debug/pprof/symbol":  http.HandlerFunc(pprof.Symbol),
		"/debug/pprof/trace":   http.HandlerFunc(pprof.Trace),
		"/debug/flags/v":       verbosityHandler(logs.GlogSetter),
	}
	return m
}

// verbosityHandler sets the log verbosity (-v) to the level a PUT's body
// holds, e.g. `curl -X PUT --data 4 .../debug/flags/v`.
func verbosityHandler(set func(string) (string, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPut {
			w.Header().Set("Allow", http.MethodPut)
			http.Error(w, "PUT the verbosity level, e.g. 4", http.StatusMethodNotAllowed)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, 64))
		if err != nil {
			http.Error(w, "reading the body: "+err.Error(), http.StatusBadRequest)
			return
		}
		msg, err := set(strings.TrimSpace(string(body)))
		if err != nil {
			http.Error(w, fmt.Sprintf("the body must be a verbosity level (a non-negative integer): %v", err), http.StatusBadRequest)
			return
		}
		_, _ = io.WriteString(w, msg)
	})
}

// activeJobs counts CAPTF's unfinished Jobs by kind and operation from the
// manager's Job cache, on the leader only: a standby runs no controller,
// so its Job informer never starts and it would only block the scrape.
func activeJobs(mgr ctrl.Manager) metrics.ActiveJobsSource {
	return func() (map[metrics.JobKey]int, bool) {
		select {
		case <-mgr.Elected():
		default:
			return nil, false
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		var jobs batchv1.JobList
		if err := mgr.GetCache().List(ctx, &jobs, client.MatchingLabels{infrav1.ManagedLabel: "true"}); err != nil {
			return nil, false
		}
		return countActive(jobs.Items), true
	}
}

// countActive counts the unfinished run Jobs by owner kind and operation.
func countActive(list []batchv1.Job) map[metrics.JobKey]int {
	counts := map[metrics.JobKey]int{}
	for i := range list {
		j := &list[i]
		if finished, _, _, _ := jobs.Finished(j); j.Labels[infrav1.OperationLabel] == "" || finished {
			continue
		}
		counts[metrics.JobKey{Kind: j.Labels[infrav1.OwnerKindLabel], Op: j.Labels[infrav1.OperationLabel]}]++
	}
	return counts
}

// instrument sets the manager-wide metrics: captf_build_info, and the
// source of captf_jobs_active.
func (o *Options) instrument(mgr ctrl.Manager) {
	b := o.Build()
	metrics.SetBuildInfo(b.Version, b.Commit, b.Contract)
	metrics.SetActiveJobsSource(activeJobs(mgr))
}
