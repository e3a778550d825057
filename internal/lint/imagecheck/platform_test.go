package imagecheck

import (
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"captf.io/captf/internal/lint"
	"captf.io/captf/pkg/contract"
)

// arm64 is the clean image built for linux/arm64: its mirror holds no
// linux_arm64 package, so checking it finds that.
func arm64() spec {
	s := clean()
	s.arch = "arm64"
	return s
}

const missingArm64 = "the mirror has no package of provider hashicorp/null for linux_arm64"

// An index is checked for linux/amd64 by default, for the platform asked,
// or for all of its platforms, each finding saying where it was found.
func TestIndexPlatforms(t *testing.T) {
	amd, arm := clean(), arm64()
	amd.entrypoint, arm.entrypoint = []string{"/captf/runtime"}, []string{"/captf/runtime"}
	both := []v1.Image{amd.image(t), arm.image(t)}
	testCases := []struct {
		name        string
		images      []v1.Image
		noPlatforms bool // the layout's index does not record them
		nested      bool // the layout holds one image index
		opts        Options
		checked     []string
		want        []string // messages (prefixes) of serious findings, by ID
	}{
		{name: "default picks linux/amd64", images: both, checked: []string{"linux/amd64"}},
		{name: "default reads platforms from configs", images: both, noPlatforms: true, checked: []string{"linux/amd64"}},
		{name: "asked platform", images: both, opts: Options{Platform: "linux/arm64", PlatformSet: true},
			checked: []string{"linux/arm64"}, want: []string{"image/providers-complete " + missingArm64}},
		{name: "all platforms", images: both, opts: Options{AllPlatforms: true},
			checked: []string{"linux/amd64", "linux/arm64"}, want: []string{"image/providers-complete linux/arm64: " + missingArm64}},
		{name: "nested index", images: both, nested: true, opts: Options{Platform: "linux/arm64", PlatformSet: true},
			checked: []string{"linux/arm64"}, want: []string{"image/providers-complete " + missingArm64}},
		{name: "index without linux/amd64", images: []v1.Image{arm.image(t)}, nested: true, checked: nil,
			want: []string{"image/platform the index has no image for linux/amd64 (it has linux/arm64)"}},
		{name: "all platforms, asked one missing", images: both, opts: Options{AllPlatforms: true, Platform: "linux/s390x", PlatformSet: true},
			checked: []string{"linux/amd64", "linux/arm64"},
			want:    []string{"image/platform the index has no image for linux/s390x", "image/providers-complete linux/arm64: " + missingArm64}},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.Role, tc.opts.Ref = contract.RoleMachine, writeLayout(t, !tc.noPlatforms, tc.images...)
			if tc.nested {
				tc.opts.Ref = writeIndexLayout(t, tc.images...)
			}
			tc.opts.ModuleCheck = stub(nullProvider, seen{})
			findings, d, err := Check(t.Context(), tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			desc := d.(*Description)
			var checked []string
			for _, img := range desc.Images {
				checked = append(checked, img.Platform)
			}
			if strings.Join(checked, ",") != strings.Join(tc.checked, ",") {
				t.Errorf("checked %v, want %v", checked, tc.checked)
			}
			got := serious(findings)
			if len(got) != len(tc.want) {
				t.Fatalf("findings %+v, want %d: %v", got, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if g := got[i].ID + " " + got[i].Message; !strings.HasPrefix(g, w) || got[i].Severity != lint.Error {
					t.Errorf("finding %d is %s %q, want error %q...", i, got[i].Severity, g, w)
				}
			}
			if len(desc.Platforms) != len(tc.images) {
				t.Errorf("index platforms %v", desc.Platforms)
			}
		})
	}
}

// With --all-platforms, a finding of every platform is given once, saying
// all of them; capacity labels that differ between platforms are an
// error.
func TestAllPlatformsMerge(t *testing.T) {
	amd, arm := clean(), arm64()
	amd.entrypoint, arm.entrypoint = []string{"/captf/runtime"}, []string{"/captf/runtime"}
	arm.labels[labelNodeInfo] = `{"architecture":"arm64","operatingSystem":"linux"}`
	opts := Options{Role: contract.RoleMachine, Ref: writeLayout(t, true, amd.image(t), arm.image(t)), AllPlatforms: true}
	findings, _, err := Check(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	var entry []lint.Finding
	for _, f := range findings {
		if f.ID == "image/entrypoint" {
			entry = append(entry, f)
		}
	}
	if len(entry) != 1 || !strings.HasPrefix(entry[0].Message, "linux/amd64, linux/arm64: the image sets ENTRYPOINT") {
		t.Errorf("entrypoint findings %+v, want one naming both platforms", entry)
	}
	if f, ok := find(findings, "image/label-capacity", lint.Whole); !ok || f.Severity != lint.Error || !strings.Contains(f.Message, labelNodeInfo) {
		t.Errorf("differing node-info labels: %+v", findings)
	}
}

// A single-platform image is checked as it is, unless --platform asks for
// another.
func TestSinglePlatformImage(t *testing.T) {
	ref := writeLayout(t, false, arm64().image(t))
	for _, tc := range []struct {
		opts Options
		want bool
	}{
		{opts: Options{}, want: false},
		{opts: Options{AllPlatforms: true}, want: false},
		{opts: Options{Platform: "linux/arm64", PlatformSet: true}, want: false},
		{opts: Options{Platform: "linux/amd64", PlatformSet: true}, want: true},
	} {
		tc.opts.Role, tc.opts.Ref = contract.RoleMachine, ref
		findings, d, err := Check(t.Context(), tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		if _, got := find(findings, "image/platform", lint.Whole); got != tc.want {
			t.Errorf("%+v: platform finding %v, want %v (%+v)", tc.opts, got, tc.want, findings)
		}
		if imgs := d.(*Description).Images; len(imgs) != 1 || imgs[0].Platform != "linux/arm64" {
			t.Errorf("%+v: checked %+v", tc.opts, imgs)
		}
		for _, f := range findings {
			if tc.opts.AllPlatforms && !strings.HasPrefix(f.Message, "linux/arm64: ") {
				t.Errorf("with --all-platforms, %+v does not say its platform", f)
			}
		}
	}
}
