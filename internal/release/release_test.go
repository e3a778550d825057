package release

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// published are the release series already released: metadata.yaml is
// append only, so each stays there unchanged. Append a series here when
// its first release is published.
var published = []Series{{Major: 0, Minor: 1, Contract: "v1beta2"}}

func TestPublishedSeriesAreKept(t *testing.T) {
	t.Parallel()
	m, err := ReadMetadata(filepath.Join("..", "..", MetadataFile))
	if err != nil {
		t.Fatal(err)
	}
	if m.APIVersion != "clusterctl.cluster.x-k8s.io/v1alpha3" || m.Kind != "Metadata" {
		t.Errorf("metadata.yaml is %s %s, want clusterctl.cluster.x-k8s.io/v1alpha3 Metadata", m.APIVersion, m.Kind)
	}
	for _, s := range published {
		if !slices.Contains(m.ReleaseSeries, s) {
			t.Errorf("metadata.yaml lost or changed the published release series %d.%d → %s: a series is never removed or changed", s.Major, s.Minor, s.Contract)
		}
	}
}

func TestRender(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	dir, err := Render(Options{Repo: filepath.Join("..", ".."), Version: "v0.1.3", Out: out})
	if err != nil {
		t.Fatal(err)
	}
	if dir != filepath.Join(out, "infrastructure-terraform", "v0.1.3") {
		t.Errorf("rendered into %s", dir)
	}
	files := append([]string{ComponentsFile, MetadataFile}, Templates...)
	sums, err := os.ReadFile(filepath.Join(dir, ChecksumsFile))
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(sums))
	for sc.Scan() {
		sum, name, _ := strings.Cut(sc.Text(), "  ")
		listed[name] = sum
	}
	for _, name := range files {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		if listed[name] != hex.EncodeToString(sum[:]) {
			t.Errorf("%s: checksums.txt says %q, the file's sha256 is %x", name, listed[name], sum)
		}
		if name == MetadataFile || slices.Contains(Templates, name) {
			src := filepath.Join("..", "..", "templates", name)
			if name == MetadataFile {
				src = filepath.Join("..", "..", name)
			}
			if want, _ := os.ReadFile(src); !bytes.Equal(data, want) {
				t.Errorf("%s differs from %s", name, src)
			}
		}
	}
	if len(listed) != len(files) {
		t.Errorf("checksums.txt lists %d files, want %d", len(listed), len(files))
	}

	raw, err := os.ReadFile(filepath.Join(dir, ComponentsFile))
	if err != nil {
		t.Fatal(err)
	}
	crds, image := 0, ""
	namespace := false
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
	for {
		var u unstructured.Unstructured
		if err := dec.Decode(&u.Object); err != nil {
			break
		}
		switch u.GetKind() {
		case "CustomResourceDefinition":
			crds++
			if u.GetLabels()["cluster.x-k8s.io/provider"] != "infrastructure-terraform" || u.GetLabels()["cluster.x-k8s.io/v1beta2"] != "v1alpha1" {
				t.Errorf("CRD %s has labels %v, want the provider and contract labels", u.GetName(), u.GetLabels())
			}
		case "Namespace":
			namespace = namespace || u.GetName() == "captf-system"
		case "Deployment":
			containers, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
			for _, c := range containers {
				c := c.(map[string]any)
				image = c["image"].(string)
				for _, e := range c["env"].([]any) {
					if e := e.(map[string]any); e["name"] == "CAPTF_MANAGER_IMAGE" && e["value"] != image {
						t.Errorf("CAPTF_MANAGER_IMAGE is %v, want the manager's image %s", e["value"], image)
					}
				}
			}
		}
	}
	if crds != 8 || !namespace || image != ImageRepository+":v0.1.3" {
		t.Errorf("components: %d CRDs, namespace captf-system %v, manager image %q; want 8, true, %s:v0.1.3", crds, namespace, image, ImageRepository)
	}
}

func TestRenderRefuses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ version, want string }{
		{"0.1.0", "is not a release version: use vX.Y.Z"},
		{"v0.1", "is not a release version"},
		{"v0.1.0-beta.1", "is not a release version"},
		{"v9.4.0", "metadata.yaml has no release series 9.4"},
	} {
		t.Run(tc.version, func(t *testing.T) {
			out := t.TempDir()
			_, err := Render(Options{Repo: filepath.Join("..", ".."), Version: tc.version, Out: out})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("rendering %s: %v, want an error saying %q", tc.version, err, tc.want)
			}
			if entries, _ := os.ReadDir(out); len(entries) > 0 {
				t.Errorf("a refused release wrote %d entries", len(entries))
			}
		})
	}
}
