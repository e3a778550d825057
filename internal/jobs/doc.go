// Package jobs builds the Kubernetes objects of a module run: the Job, its
// pod and the per-run Secret. It is pure: builders take what was decided
// and return objects; nothing here talks to the API server.
package jobs
