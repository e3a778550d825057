package scale_test

import (
	"cmp"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// traffic counts what a manager asks of the API server: requests (a watch
// is one), writes of a status subresource, and the bytes of every response
// body it read, watch streams included; and requests by verb and
// resource.
type traffic struct {
	requests, statusWrites, bytesRead atomic.Int64
	mu                                sync.Mutex
	byKind                            map[string]int64
}

// trafficCount is a reading of a traffic's counters.
type trafficCount struct {
	requests, statusWrites, bytesRead int64
	byKind                            map[string]int64
}

func (t *traffic) read() trafficCount {
	t.mu.Lock()
	defer t.mu.Unlock()
	by := make(map[string]int64, len(t.byKind))
	for k, v := range t.byKind {
		by[k] = v
	}
	return trafficCount{requests: t.requests.Load(), statusWrites: t.statusWrites.Load(), bytesRead: t.bytesRead.Load(), byKind: by}
}

func (c trafficCount) since(from trafficCount) trafficCount {
	by := map[string]int64{}
	for k, v := range c.byKind {
		if d := v - from.byKind[k]; d != 0 {
			by[k] = d
		}
	}
	return trafficCount{requests: c.requests - from.requests, statusWrites: c.statusWrites - from.statusWrites,
		bytesRead: c.bytesRead - from.bytesRead, byKind: by}
}

// top lists the n most frequent requests, "VERB resource: count".
func (c trafficCount) top(n int) string {
	keys := make([]string, 0, len(c.byKind))
	for k := range c.byKind {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int { return cmp.Or(cmp.Compare(c.byKind[b], c.byKind[a]), strings.Compare(a, b)) })
	var out []string
	for _, k := range keys[:min(n, len(keys))] {
		out = append(out, fmt.Sprintf("%s %d", k, c.byKind[k]))
	}
	return strings.Join(out, ", ")
}

// countingTransport counts what passes through rt, which client-go calls
// after its rate limiter: each count is a request the API server
// received.
type countingTransport struct {
	t  *traffic
	rt http.RoundTripper
}

// WrappedRoundTripper lets client-go close the idle connections below.
func (c countingTransport) WrappedRoundTripper() http.RoundTripper { return c.rt }

func (c countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	t := c.t
	t.requests.Add(1)
	kind := requestKind(req)
	if strings.HasSuffix(kind, "/status") && (req.Method == http.MethodPut || req.Method == http.MethodPatch) {
		t.statusWrites.Add(1)
	}
	t.mu.Lock()
	if t.byKind == nil {
		t.byKind = map[string]int64{}
	}
	t.byKind[kind]++
	t.mu.Unlock()
	resp, err := c.rt.RoundTrip(req)
	if resp != nil && resp.Body != nil {
		resp.Body = &countedBody{ReadCloser: resp.Body, n: &t.bytesRead}
	}
	return resp, err
}

// requestKind names a request by verb (LIST and WATCH for collection
// GETs) and resource, with its subresource: "GET secrets",
// "PATCH terraformmachines/status".
func requestKind(req *http.Request) string {
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	// api/v1/... or apis/group/version/...
	rest := parts[min(len(parts), 2):]
	if len(parts) > 0 && parts[0] == "apis" {
		rest = parts[min(len(parts), 3):]
	}
	if len(rest) >= 2 && rest[0] == "namespaces" && len(rest) > 2 {
		rest = rest[2:]
	}
	verb := req.Method
	resource := strings.Join(rest, "/")
	switch {
	case len(rest) == 0:
		resource = req.URL.Path
	case len(rest) == 1 && verb == http.MethodGet && req.URL.Query().Get("watch") == "true":
		verb = "WATCH"
	case len(rest) == 1 && verb == http.MethodGet:
		verb = "LIST"
	default:
		resource = rest[0]
		if len(rest) > 2 {
			resource += "/" + strings.Join(rest[2:], "/")
		}
	}
	return verb + " " + resource
}

func (t *traffic) wrap(rt http.RoundTripper) http.RoundTripper {
	return countingTransport{t: t, rt: rt}
}

type countedBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b *countedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

func TestRequestKind(t *testing.T) {
	testCases := []struct {
		method, url, want string
	}{
		{"GET", "/api/v1/namespaces/ns/secrets?labelSelector=x", "LIST secrets"},
		{"GET", "/api/v1/namespaces/ns/secrets/s1", "GET secrets"},
		{"GET", "/api/v1/secrets?watch=true", "WATCH secrets"},
		{"PATCH", "/apis/infrastructure.cluster.x-k8s.io/v1alpha1/namespaces/ns/terraformmachines/m-0001/status", "PATCH terraformmachines/status"},
		{"GET", "/apis/infrastructure.cluster.x-k8s.io/v1alpha1/terraformclusteridentities/id", "GET terraformclusteridentities"},
		{"POST", "/api/v1/namespaces/ns/events", "POST events"},
		{"GET", "/apis/batch/v1/namespaces/ns/jobs?watch=true&labelSelector=a", "WATCH jobs"},
	}
	for _, tc := range testCases {
		req, err := http.NewRequest(tc.method, "https://x"+tc.url, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := requestKind(req); got != tc.want {
			t.Errorf("%s %s: %q, want %q", tc.method, tc.url, got, tc.want)
		}
	}
}
