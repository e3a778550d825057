// Package metrics holds CAPTF's Prometheus collectors, registered with the
// controller-runtime registry the manager serves on its metrics endpoint.
// Every CAPTF metric is ALPHA: its HELP starts with `[ALPHA]`. Labels are
// bounded enums; only the per-object gauges carry namespace and name, and
// their series are deleted with the object (Forget). Each metric has a small
// typed recording function (Observe*, Set*); docs/reference/metrics.md
// lists them all with the event that records them.
package metrics
