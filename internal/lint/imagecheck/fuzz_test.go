package imagecheck

import (
	"bytes"
	"io"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"captf.io/captf/pkg/contract"
)

// Any layer, however malformed, gives findings or an error, never a
// panic (checkImage runs without Check's recover).
func FuzzLayer(f *testing.F) {
	var buf bytes.Buffer
	rc, err := clean().image(f).Layers()
	if err != nil {
		f.Fatal(err)
	}
	u, err := rc[0].Uncompressed()
	if err != nil {
		f.Fatal(err)
	}
	if _, err := io.Copy(&buf, u); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes(), "65532")
	f.Add([]byte{}, "")
	f.Fuzz(func(t *testing.T, data []byte, user string) {
		l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
		if err != nil {
			return
		}
		img, err := mutate.AppendLayers(empty.Image, l, l)
		if err != nil {
			return
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		cf.Config.User = user
		if img, err = mutate.ConfigFile(img, cf); err != nil {
			t.Fatal(err)
		}
		opts := Options{Role: contract.RoleMachine, Contract: contract.Version, Ref: "fuzz", ModuleCheck: stub(nullProvider, seen{})}
		_, _, _ = checkImage(t.Context(), opts, target{img: img})
	})
}

// Any label value gives findings, never a panic.
func FuzzLabels(f *testing.F) {
	f.Add(`{"cpu":"2","memory":"4Gi"}`, `{"architecture":"amd64"}`)
	f.Add(`{"":"1"}`, `{"architecture":1}`)
	f.Fuzz(func(t *testing.T, capacity, nodeInfo string) {
		labels := map[string]string{labelCapacity: capacity, labelNodeInfo: nodeInfo}
		findings := checkLabels(contract.RoleMachine, contract.Version, labels, []string{"shape"})
		if len(findings) == 0 {
			t.Fatal("no finding, not even of the missing role label")
		}
	})
}
