package manager_test

import (
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"captf.io/captf/internal/test/kustomizetest"
)

// Prometheus scrapes the manager as config/prometheus sets it up: with
// the token of the ServiceAccount captf-metrics-reader binds, /metrics
// answers with CAPTF's series; the token of another ServiceAccount is
// refused, and so is a scrape without a token.
func TestMetricsReaderRoleScrapes(t *testing.T) {
	startManager(t)
	ctx := context.Background()
	for _, o := range kustomizetest.Build(t, nil, []string{"config/prometheus"}) {
		if o.GetName() == "captf-metrics-reader" {
			applyObject(ctx, t, o)
		}
	}
	// The diagnostics server starts beside the webhooks, maybe after them.
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		resp, err := insecureClient.Get("https://" + diagnosticsAddr + "/metrics")
		if err == nil {
			_ = resp.Body.Close()
		}
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("the manager never listened on its diagnostics address %s: %v", diagnosticsAddr, err)
	}
	prometheus := serviceAccountToken(ctx, t, "monitoring", "prometheus-k8s")
	stranger := serviceAccountToken(ctx, t, "monitoring", "stranger")
	// The API server's RBAC sees the new binding a moment later, and the
	// manager remembers a denial for 30 s: wait for the first 200.
	err = wait.PollUntilContextTimeout(ctx, time.Second, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		code, _ := scrape(ctx, t, prometheus)
		return code == http.StatusOK, nil
	})
	if err != nil {
		t.Fatalf("Prometheus's token was never let in: %v", err)
	}

	testCases := []struct {
		name, token string
		code        int
	}{
		{"Prometheus's ServiceAccount", prometheus, http.StatusOK},
		{"another ServiceAccount", stranger, http.StatusForbidden},
		{"no token", "", http.StatusUnauthorized},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			code, body := scrape(ctx, t, tc.token)
			if code != tc.code {
				t.Fatalf("/metrics answered %d, want %d", code, tc.code)
			}
			if tc.code == http.StatusOK && (!strings.Contains(body, "captf_build_info") || !strings.Contains(body, "controller_runtime_")) {
				t.Errorf("/metrics lacks CAPTF's and controller-runtime's series (%d bytes):\n%.2000s", len(body), body)
			}
			if tc.code != http.StatusOK && strings.Contains(body, "captf_") {
				t.Errorf("a refused scrape was answered with series")
			}
		})
	}
}

func applyObject(ctx context.Context, t *testing.T, o *unstructured.Unstructured) {
	t.Helper()
	if err := env.Client.Patch(ctx, o, client.Apply, client.ForceOwnership, client.FieldOwner("metrics-test")); err != nil { //nolint:staticcheck // server-side apply of unstructured objects
		t.Fatalf("applying %s %s: %v", o.GetKind(), o.GetName(), err)
	}
}

// serviceAccountToken creates the ServiceAccount (and its namespace) and
// returns a token for it, as the kubelet mounts one in Prometheus's pod.
func serviceAccountToken(ctx context.Context, t *testing.T, ns, name string) string {
	t.Helper()
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}},
	} {
		if err := env.Client.Create(ctx, o); client.IgnoreAlreadyExists(err) != nil {
			t.Fatal(err)
		}
	}
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tr.Status.Token
}

// insecureClient does not verify the manager's self-signed certificate, as
// the ServiceMonitor's insecureSkipVerify.
var insecureClient = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // as the ServiceMonitor

// scrape GETs /metrics as the ServiceMonitor does, with the bearer token.
func scrape(ctx context.Context, t *testing.T, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+diagnosticsAddr+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := insecureClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}
