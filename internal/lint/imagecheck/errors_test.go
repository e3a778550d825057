package imagecheck

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/remote"

	"captf.io/captf/internal/lint"
	"captf.io/captf/internal/test/registrytest"
	"captf.io/captf/pkg/contract"
)

// An image past a cap is not linted: tfcapi-lint exits 2, saying which
// cap. The caps are lowered here rather than built past.
func TestSizeCaps(t *testing.T) {
	big := strings.Repeat("x", 64<<10)
	testCases := []struct {
		name    string
		kept    int64
		scanned int64
		change  func(*spec)
		want    string
	}{
		{name: "module files past the kept cap", kept: 32 << 10, scanned: maxScanned,
			change: func(s *spec) { add(s, file("/captf/module/big.tf", big, 0o644)) }, want: "more than the 32 KiB tfcapi-lint keeps"},
		{name: "mirror indexes past the kept cap", kept: 32 << 10, scanned: maxScanned,
			change: func(s *spec) {
				add(s, file("/captf/providers/registry.opentofu.org/hashicorp/null/9.9.9.json", big, 0o644))
			}, want: "more than the 32 KiB tfcapi-lint keeps"},
		{name: "headers past the kept cap", kept: 16 << 10, scanned: maxScanned,
			change: func(s *spec) {
				for i := range 64 {
					add(s, file(fmt.Sprintf("/usr/share/doc/%d", i), "", 0o644))
				}
			}, want: "more than the 16 KiB tfcapi-lint keeps"},
		{name: "layers past the scan cap", kept: maxKept, scanned: 32 << 10,
			change: func(s *spec) { add(s, file("/usr/lib/big", big, 0o644)) }, want: "more than the 32 KiB of uncompressed layers"},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			s := clean()
			ref := writeLayout(t, false, s.image(t))
			opts := Options{Role: contract.RoleMachine, Ref: ref}
			setCaps(t, tc.kept, tc.scanned)
			if _, _, err := Check(t.Context(), opts); err != nil {
				t.Fatalf("the clean image is within the caps: %v", err)
			}
			tc.change(&s)
			opts.Ref = writeLayout(t, false, s.image(t))
			_, desc, err := Check(t.Context(), opts)
			var unreadable *lint.UnreadableError
			if !errors.As(err, &unreadable) || lint.ExitCodeOf(err) != lint.ExitUnparsable || !strings.Contains(err.Error(), tc.want) || desc != nil {
				t.Fatalf("error %v, want an unreadable image %q", err, tc.want)
			}
		})
	}
}

func setCaps(t *testing.T, kept, scanned int64) {
	oldKept, oldScanned := maxKept, maxScanned
	maxKept, maxScanned = kept, scanned
	t.Cleanup(func() { maxKept, maxScanned = oldKept, oldScanned })
}

// A reference or platform tfcapi-lint cannot act on is a usage error
// (exit 3); an image it cannot read is unreadable (exit 2).
func TestBadReferences(t *testing.T) {
	testCases := []struct {
		name string
		opts Options
		code int
	}{
		{name: "not a reference", opts: Options{Ref: "Not A Reference"}, code: lint.ExitUsage},
		{name: "empty reference", opts: Options{Ref: ""}, code: lint.ExitUsage},
		{name: "layout without directory", opts: Options{Ref: "oci:"}, code: lint.ExitUsage},
		{name: "bad platform", opts: Options{Ref: "oci:/nowhere", Platform: "linux", PlatformSet: true}, code: lint.ExitUsage},
		{name: "missing layout", opts: Options{Ref: "oci:" + filepath.Join(t.TempDir(), "nowhere")}, code: lint.ExitUnparsable},
		{name: "unreachable registry", opts: Options{Ref: "127.0.0.1:1/captf/module:v1"}, code: lint.ExitUnparsable},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.Role = contract.RoleMachine
			findings, desc, err := Check(t.Context(), tc.opts)
			if err == nil || lint.ExitCodeOf(err) != tc.code || findings != nil || desc != nil {
				t.Fatalf("Check: %v, %v, %v; want exit code %d", findings, desc, err, tc.code)
			}
		})
	}
}

// A module the module checks cannot read makes the image unreadable,
// naming the module's path in the image, not where it was extracted.
func TestModuleCheckFails(t *testing.T) {
	opts := Options{Role: contract.RoleMachine, Ref: writeLayout(t, false, clean().image(t)),
		ModuleCheck: func(dir string) (ModuleFacts, error) {
			return ModuleFacts{}, lint.Unreadable("%s: unexpected token", filepath.Join(dir, "main.tf"))
		}}
	_, _, err := Check(t.Context(), opts)
	if lint.ExitCodeOf(err) != lint.ExitUnparsable || !strings.Contains(err.Error(), "/captf/module/main.tf: unexpected token") {
		t.Fatalf("error %v, want the module unreadable at /captf/module/main.tf", err)
	}
}

// An image pulled from a registry is checked like a layout's.
func TestRegistry(t *testing.T) {
	host := registrytest.Start(t)
	img := clean().image(t)
	ref := host + "/captf/noop-machine:v1"
	if err := remote.Write(registrytest.Ref(t, ref), img); err != nil {
		t.Fatal(err)
	}
	digest, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	saw := seen{}
	findings, d, err := Check(t.Context(), Options{Role: contract.RoleMachine, Ref: ref, Insecure: true, ModuleCheck: stub(nullProvider, saw)})
	if err != nil {
		t.Fatal(err)
	}
	if got := serious(findings); len(got) != 0 {
		t.Errorf("findings %+v", got)
	}
	if desc := d.(*Description); desc.Digest != digest.String() || desc.Reference != ref {
		t.Errorf("description %+v, want digest %s", desc, digest)
	}
	if saw["main.tf"] != moduleMain {
		t.Errorf("the module checks saw %v", saw)
	}
	_, _, err = Check(t.Context(), Options{Role: contract.RoleMachine, Ref: host + "/captf/missing:v1"})
	if lint.ExitCodeOf(err) != lint.ExitUnparsable {
		t.Errorf("a missing image: %v, want unreadable", err)
	}
}
