package localnode_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"captf.io/captf/internal/localnode"
)

// startStoreNode starts a node in ModeNamespace that pulls from store, and
// has the images of images.
func startStoreNode(t *testing.T, store string, images map[string]localnode.Image) *localnode.Node {
	t.Helper()
	requireNamespaces(t)
	dir, err := os.MkdirTemp("", "localnode-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	kc, err := env.ControlPlane.AdminKubeconfig()
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, kc, 0o600); err != nil {
		t.Fatal(err)
	}
	n, err := localnode.Start(t.Context(), localnode.Options{
		Kubeconfig: kubeconfig, Images: images, ImageStore: store, StateDir: filepath.Join(dir, "state"), Mode: localnode.ModeNamespace,
		StopGrace: 5 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		n.Stop()
		for _, p := range n.Problems() {
			t.Errorf("node: %s", p)
		}
	})
	return n
}

// A pod's image comes from the image store: by tag, then by the digest its
// container status reported (as a manager pins it); a tag the store does
// not hold leaves the pod Pending in ErrImagePull, naming the directory
// looked for.
func TestPodImageFromTheStore(t *testing.T) {
	store := t.TempDir()
	marker := filepath.Join(store, "local", "probe", "v1", "opt", "probe", "marker")
	if err := os.MkdirAll(filepath.Dir(marker), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(marker, []byte("from the store"), 0o644); err != nil {
		t.Fatal(err)
	}
	startStoreNode(t, store, nil)
	ns := namespace(t, "default")

	byTag := storePod(ns, "by-tag", "local/probe:v1")
	create(t, byTag)
	got := waitPod(t, client.ObjectKeyFromObject(byTag), "succeeded", terminated)
	status := got.Status.ContainerStatuses[0]
	if got.Status.Phase != corev1.PodSucceeded || status.State.Terminated.Message != "from the store" {
		t.Fatalf("the pod is %s with %+v; want Succeeded, the marker read", got.Status.Phase, status.State.Terminated)
	}
	if !strings.HasPrefix(status.ImageID, "local/probe@sha256:") {
		t.Errorf("the container's image ID is %q, want local/probe@sha256:...", status.ImageID)
	}

	byDigest := storePod(ns, "by-digest", status.ImageID)
	create(t, byDigest)
	if got := waitPod(t, client.ObjectKeyFromObject(byDigest), "terminated", terminated); got.Status.Phase != corev1.PodSucceeded {
		t.Errorf("the pod by digest is %s: %+v", got.Status.Phase, got.Status.ContainerStatuses)
	}

	missing := storePod(ns, "missing", "local/probe:v2")
	create(t, missing)
	got = waitPod(t, client.ObjectKeyFromObject(missing), "in ErrImagePull", func(p *corev1.Pod) bool {
		return len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].State.Waiting != nil &&
			p.Status.ContainerStatuses[0].State.Waiting.Reason == "ErrImagePull"
	})
	msg := got.Status.ContainerStatuses[0].State.Waiting.Message
	if got.Status.Phase != corev1.PodPending || !strings.Contains(msg, `"local/probe:v2"`) ||
		!strings.Contains(msg, filepath.Join(store, "local", "probe", "v2")) || !strings.Contains(msg, "its tags: v1") {
		t.Errorf("the pod is %s, waiting with %q; want Pending, naming the reference, the directory and the tags", got.Status.Phase, msg)
	}
}

// storePod is a pod whose container prints the store image's marker as its
// termination message.
func storePod(ns, name, image string) *corev1.Pod {
	pod := shellPod(ns, name, "cat /opt/probe/marker > /dev/termination-log")
	pod.Spec.Containers[0].Image = image
	return pod
}
