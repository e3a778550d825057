// Package registrytest runs a real OCI registry for tests (the
// distribution API of go-containerregistry's registry, in process) and
// pushes images whose config carries given labels, as a builder does.
package registrytest

import (
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Start serves a registry until the test ends and returns its host:port.
// With basic (a user and a password), it answers only requests that
// carry them, as a private registry does.
func Start(t testing.TB, basic ...string) string {
	t.Helper()
	h := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	if len(basic) == 2 {
		reg := h
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if u, p, ok := r.BasicAuth(); !ok || u != basic[0] || p != basic[1] {
				w.Header().Set("WWW-Authenticate", `Basic realm="registrytest"`)
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			reg.ServeHTTP(w, r)
		})
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// Image is a small random image whose config carries labels.
func Image(t testing.TB, labels map[string]string) v1.Image {
	t.Helper()
	img, err := random.Image(64, 1)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Config.Labels = labels
	if img, err = mutate.ConfigFile(img, cfg); err != nil {
		t.Fatal(err)
	}
	return img
}

// Push pushes an image with labels to ref (with auth, when given) and
// returns ref.
func Push(t testing.TB, ref string, labels map[string]string, auth ...authn.Authenticator) string {
	t.Helper()
	var opts []remote.Option
	for _, a := range auth {
		opts = append(opts, remote.WithAuth(a))
	}
	if err := remote.Write(Ref(t, ref), Image(t, labels), opts...); err != nil {
		t.Fatal(err)
	}
	return ref
}

// Ref parses ref.
func Ref(t testing.TB, ref string) name.Reference {
	t.Helper()
	parsed, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	return parsed
}
