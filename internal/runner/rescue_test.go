package runner_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"captf.io/captf/internal/runner"
	"captf.io/captf/internal/test/runnertest"
	"captf.io/captf/pkg/state"
)

// A loaded API server that refuses the rescue's read and its writes for
// longer than a backoff's first steps, then loses the answer to a write
// that landed, does not lose a rejected state: the rescue tries each call
// again and takes a piece it already wrote for its own.
func TestRescueOutlastsAFlakyAPIServer(t *testing.T) {
	t.Parallel() // mostly waits out the outage
	ns := "rescue-" + strings.ToLower(rand.Text()[:6])
	if err := env.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	// The API server refuses the first read and, for outage, every write;
	// the first write after that lands but its answer is lost with the
	// connection, so the next attempt meets its own piece (409).
	const outage = 20 * time.Second
	var (
		gets, posts, conflicts atomic.Int32
		lost                   atomic.Bool
		mu                     sync.Mutex
		firstPost              time.Time
	)
	unavailable := func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"ServiceUnavailable","code":503,"message":"overloaded"}`)
	}
	proxy := flakyProxy(t, env.Config, func(w http.ResponseWriter, r *http.Request, forward func(http.ResponseWriter)) bool {
		if !strings.Contains(r.URL.Path, "/secrets") {
			return false
		}
		if r.Method == http.MethodGet {
			if gets.Add(1) == 1 {
				unavailable(w)
				return true
			}
			return false
		}
		if r.Method != http.MethodPost {
			return false
		}
		mu.Lock()
		if firstPost.IsZero() {
			firstPost = time.Now()
		}
		down := time.Since(firstPost) < outage
		mu.Unlock()
		posts.Add(1)
		switch {
		case down:
			unavailable(w)
			return true
		case !lost.Swap(true):
			forward(httptest.NewRecorder())
			panic(http.ErrAbortHandler)
		}
		rec := httptest.NewRecorder()
		forward(rec)
		if rec.Code == http.StatusConflict {
			conflicts.Add(1)
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
		return true
	})

	root := t.TempDir()
	payload := make([]byte, 2*state.ChunkSize) // random bytes do not compress: the set needs three pieces
	_, _ = rand.Read(payload)
	errored := fmt.Sprintf(`{"version":4,"serial":9,"lineage":"l-1","resources":[{"mode":"managed","type":"x","name":"y","instances":[]}],"outputs":{"blob":{"value":%q,"type":"string"}}}`, hex.EncodeToString(payload))
	runnertest.Write(t, filepath.Join(root, runner.ErroredStateFile), []byte(errored))
	backendConfig := []string{"namespace=" + ns, "secret_suffix=flaky", "config_path=" + proxy}

	res, err := runner.RescueErroredState(context.Background(), root, backendConfig)
	if err != nil {
		t.Fatalf("the rescue gave up on a flaky API server: %v", err)
	}
	if gets.Load() < 2 || conflicts.Load() != 1 || time.Since(firstPost) < outage {
		t.Fatalf("the faults were not all exercised: %d reads, %d writes, %d answered 409, %s since the first write",
			gets.Load(), posts.Load(), conflicts.Load(), time.Since(firstPost))
	}
	var secrets corev1.SecretList
	if err := env.Client.List(context.Background(), &secrets, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	sets := state.Backups(secrets.Items)
	if len(sets) != 1 || sets[0].Name != res.Backup || sets[0].Serial != 9 || len(sets[0].Chunks) != res.Chunks {
		t.Fatalf("backup sets %+v, want one set %s of %d pieces", sets, res.Backup, res.Chunks)
	}
	var gz bytes.Buffer
	for _, name := range sets[0].Chunks {
		for _, s := range secrets.Items {
			if s.Name == name {
				gz.Write(s.Data[state.DataKey])
			}
		}
	}
	zr, err := gzip.NewReader(&gz)
	if err != nil {
		t.Fatal(err)
	}
	if back, err := io.ReadAll(zr); err != nil || string(back) != errored {
		t.Fatalf("the saved backup does not read back as the rejected state (%d bytes): %v", len(back), err)
	}
}

// flakyProxy serves the API server at cfg through a proxy whose fault
// function may answer a request itself, and returns a kubeconfig for it.
func flakyProxy(t *testing.T, cfg *rest.Config, fault func(http.ResponseWriter, *http.Request, func(http.ResponseWriter)) bool) string {
	t.Helper()
	target, err := url.Parse(cfg.Host)
	if err != nil {
		t.Fatal(err)
	}
	transport, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport = transport
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		forward := func(to http.ResponseWriter) { rp.ServeHTTP(to, r) }
		if !fault(w, r, forward) {
			forward(w)
		}
	}))
	srv.Config.ErrorLog = nil
	t.Cleanup(srv.Close)
	kc := clientcmdapi.NewConfig()
	kc.Clusters["proxy"] = &clientcmdapi.Cluster{Server: srv.URL, InsecureSkipTLSVerify: true}
	kc.AuthInfos["proxy"] = &clientcmdapi.AuthInfo{}
	kc.Contexts["proxy"] = &clientcmdapi.Context{Cluster: "proxy", AuthInfo: "proxy"}
	kc.CurrentContext = "proxy"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}
