package devenv

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
)

// Demo shows CAPTF's API on a real control plane: it creates one object of
// every kind from examples/api-tour, lists them the way `kubectl get` shows
// them, shows an invalid object being rejected with its fields named, then
// deletes everything and checks that nothing is left.
func (e *Env) Demo(ctx context.Context, out io.Writer) error {
	dir := filepath.Join(e.Repo, "examples", "api-tour")
	objs, err := ReadManifestDir(dir)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\nCreating %d objects from %s\n", len(objs), dir)
	if err := Create(ctx, e.Client, objs); err != nil {
		return err
	}
	fmt.Fprintln(out, "\nWaiting for the manager's identity controller to check the credentials Secret")
	if err := waitIdentityReady(ctx, e.Client, "noop"); err != nil {
		return err
	}
	fmt.Fprintln(out, "Waiting for Cluster API to adopt the TerraformCluster")
	owner, err := waitOwnedBy(ctx, e.Client, "default", "demo", "Cluster")
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "TerraformCluster default/demo is owned by Cluster %s\n", owner)
	if err := e.kubectl(out, "get", "cluster-api", "--all-namespaces"); err != nil {
		return err
	}
	if err := e.kubectl(out, "get", "terraformclusters,terraformmachines,terraformmachinepools", "-o", "wide"); err != nil {
		return err
	}
	for _, bad := range []string{"invalid-machine.yaml", "invalid-env.yaml"} {
		if err := e.showRejection(ctx, out, filepath.Join(dir, bad)); err != nil {
			return err
		}
	}
	// Namespaces stay: their deletion is asynchronous and the environment
	// is thrown away anyway.
	objs = withoutKind(objs, "Namespace")
	fmt.Fprintln(out, "\nDeleting the tour's objects")
	if err := Delete(ctx, e.Client, objs); err != nil {
		return err
	}
	if err := waitGone(ctx, e.Client, objs); err != nil {
		return fmt.Errorf("waiting for the tour's objects to go: %w", err)
	}
	fmt.Fprintln(out, "Nothing is left. (The manager checks credentials and admits objects; running modules for them is not part of this build yet.)")
	return nil
}

func (e *Env) showRejection(ctx context.Context, out io.Writer, path string) error {
	bad, err := ReadManifests(path)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\nCreating %s, which breaks the API's rules:\n", filepath.Base(path))
	err = Create(ctx, e.Client, bad)
	if !apierrors.IsInvalid(err) {
		return fmt.Errorf("the invalid object was not rejected as invalid: %w", err)
	}
	fmt.Fprintf(out, "  rejected: %v\n", err)
	return nil
}

// waitOwnedBy waits until Cluster API sets an owner reference of kind on
// the TerraformCluster, and returns the owner's name.
func waitOwnedBy(ctx context.Context, c client.Client, ns, name, kind string) (string, error) {
	var owner string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		tc := &infrav1.TerraformCluster{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, tc); err != nil {
			return false, err
		}
		for _, ref := range tc.OwnerReferences {
			if ref.Kind == kind {
				owner = ref.Name
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return "", fmt.Errorf("cluster API did not adopt TerraformCluster %s/%s: %w", ns, name, err)
	}
	return owner, nil
}

// waitIdentityReady waits until the identity controller reports Ready.
func waitIdentityReady(ctx context.Context, c client.Client, name string) error {
	return wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		id := &infrav1.TerraformClusterIdentity{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, id); err != nil {
			return false, err
		}
		return meta.IsStatusConditionTrue(id.Status.Conditions, infrav1.ReadyCondition), nil
	})
}

func withoutKind(objs []*unstructured.Unstructured, kind string) []*unstructured.Unstructured {
	var kept []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() != kind {
			kept = append(kept, o)
		}
	}
	return kept
}

func waitGone(ctx context.Context, c client.Client, objs []*unstructured.Unstructured) error {
	return wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		for _, o := range objs {
			probe := &unstructured.Unstructured{}
			probe.SetGroupVersionKind(o.GroupVersionKind())
			err := c.Get(ctx, client.ObjectKeyFromObject(o), probe)
			if err == nil {
				return false, nil
			}
			if !apierrors.IsNotFound(err) {
				return false, err
			}
		}
		return true, nil
	})
}

// kubectl runs the tool cache's kubectl against the environment.
func (e *Env) kubectl(out io.Writer, args ...string) error {
	bin := filepath.Join(e.Tools, "bin", "kubectl")
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("kubectl is missing from %s: run `make tools`", e.Tools)
	}
	fmt.Fprintf(out, "\n$ kubectl %s\n", strings.Join(args, " "))
	cmd := exec.Command(bin, append([]string{"--kubeconfig", e.Kubeconfig}, args...)...)
	cmd.Stdout, cmd.Stderr = out, out
	return cmd.Run()
}
