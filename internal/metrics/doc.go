// Package metrics holds CAPTF's Prometheus collectors, registered with the
// controller-runtime registry the manager serves on its metrics endpoint.
// Per-object series carry kind, namespace and name and are deleted with the
// object (Forget).
package metrics
