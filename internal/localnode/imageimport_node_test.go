package localnode_test

import (
	"encoding/json"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"captf.io/captf/internal/imagebuild"
	"captf.io/captf/internal/localnode"
	"captf.io/captf/internal/runner"
	"captf.io/captf/internal/test/envtest"
)

// A module image built elsewhere, as an OCI layout (the example cluster
// module and its provider mirror laid over the OpenTofu base image of
// `make images`), is imported into the image store and runs on the node
// by its reference and digest: the Job's apply succeeds with the image's
// own runtime, reached through the base image's /captf/runtime link.
func TestImportedModuleImageRunsByDigest(t *testing.T) {
	requireNamespaces(t)
	tools := envtest.RequireTools(t, "tofu", "sh")
	root, err := envtest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	version, err := imagebuild.RuntimeVersion(t.Context(), filepath.Join(tools, "bin", "tofu"))
	if err != nil {
		t.Fatal(err)
	}
	spec := imagebuild.BaseSpec(imagebuild.BaseInputs{Runtime: "tofu", Bin: filepath.Join(tools, "bin", "tofu"), Version: version,
		Shell: filepath.Join(tools, "bin", "sh"), CAs: imagebuild.CABundlePath}, runtime.GOARCH, imagebuild.Meta{})
	mirror := filepath.Join("registry.opentofu.org", "hashicorp")
	for src, dest := range map[string]string{
		filepath.Join(root, "examples", "modules", "noop-cluster"): "/captf/module",
		filepath.Join(tools, "providers", mirror, "null"):          "/captf/providers/registry.opentofu.org/hashicorp/null",
		filepath.Join(tools, "providers", mirror, "random"):        "/captf/providers/registry.opentofu.org/hashicorp/random",
	} {
		files, err := imagebuild.Tree(src, dest)
		if err != nil {
			t.Fatal(err)
		}
		spec.Files = append(spec.Files, files...)
	}
	spec.Labels["io.captf.role"] = "cluster"
	img, err := imagebuild.Build(spec)
	if err != nil {
		t.Fatal(err)
	}
	const ref = "registry.example.com/captf/noop-cluster:v1"
	layout := filepath.Join(t.TempDir(), "noop-cluster")
	digest, err := imagebuild.WriteLayout(layout, ref, img)
	if err != nil {
		t.Fatal(err)
	}
	store := t.TempDir()
	imported, err := localnode.ImportImage(store, layout, "", runtime.GOARCH)
	if err != nil {
		t.Fatal(err)
	}
	if imported.Ref != ref || imported.Digest != digest.String() {
		t.Fatalf("imported %+v, want %s at %s", imported, ref, digest)
	}
	n := startStoreNode(t, store, map[string]localnode.Image{runnerImage: localnode.RunnerImage(buildRunner(t))})
	ns := runnerNamespace(t)
	job := startApply(t, ns, ref+"@"+digest.String(), false)
	pod := jobPod(t, job, "finished", terminated)
	if pod.Status.Phase != corev1.PodSucceeded {
		log, _ := n.Logs(ns, pod.Name, "")
		t.Fatalf("the pod %s; log:\n%s", pod.Status.Phase, log)
	}
	var res runner.Result
	if err := json.Unmarshal([]byte(pod.Status.ContainerStatuses[0].State.Terminated.Message), &res); err != nil || res.Op != runner.OpApply || res.Error != nil {
		t.Fatalf("the termination message is not a successful apply: %v %+v", err, res)
	}
	if !strings.Contains(res.Runtime.Version, version) || !res.Image.ProvidersMirror {
		t.Errorf("the runner ran %q (mirror %v), want the image's OpenTofu %s with its mirror", res.Runtime.Version, res.Image.ProvidersMirror, version)
	}
	reported := false
	for _, s := range pod.Status.ContainerStatuses {
		if s.Image == ref+"@"+digest.String() {
			reported = true
			if s.ImageID != "registry.example.com/captf/noop-cluster@"+digest.String() {
				t.Errorf("the module container reports the image ID %q, want the manifest digest %s", s.ImageID, digest)
			}
		}
	}
	if !reported {
		t.Errorf("no container of the pod reports the image %s@%s: %+v", ref, digest, pod.Status.ContainerStatuses)
	}
}
