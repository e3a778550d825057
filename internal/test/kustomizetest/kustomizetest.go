// Package kustomizetest renders this repository's kustomize directories as
// a user does: config/default as it is, and the optional components from a
// bare kustomization of the user's own that lists them.
package kustomizetest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"captf.io/captf/internal/test/envtest"
)

// Build renders a kustomization listing resources and components, each a
// directory relative to the repository root (config/default,
// config/prometheus, ...), and returns its objects in order.
func Build(t testing.TB, resources, components []string) []*unstructured.Unstructured {
	t.Helper()
	root, err := envtest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	k := types.Kustomization{TypeMeta: types.TypeMeta{APIVersion: types.KustomizationVersion, Kind: types.KustomizationKind}}
	// kustomize takes relative paths only.
	rel := func(p string) string {
		r, err := filepath.Rel(dir, filepath.Join(root, p))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	for _, r := range resources {
		k.Resources = append(k.Resources, rel(r))
	}
	for _, c := range components {
		k.Components = append(k.Components, rel(c))
	}
	data, err := yaml.Marshal(k)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	// kustomize's default load restrictions, as `kustomize build` has them.
	res, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize build of resources %v and components %v: %v", resources, components, err)
	}
	var objs []*unstructured.Unstructured
	for _, r := range res.Resources() {
		data, err := r.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(data); err != nil {
			t.Fatal(fmt.Errorf("%s: %w", r.CurId(), err))
		}
		objs = append(objs, u)
	}
	return objs
}

// Find returns the rendered object of that kind and name, failing the test
// when there is none.
func Find(t testing.TB, objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	t.Fatalf("the rendered objects hold no %s %s", kind, name)
	return nil
}
