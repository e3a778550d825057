package devenv

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/localnode"
	"captf.io/captf/pkg/state"
)

// workloadKinds are CAPTF's kinds that run modules.
var workloadKinds = []string{"TerraformCluster", "TerraformMachine", "TerraformMachinePool"}

// waitTimeout bounds each wait of the demo; a warm run needs a fraction.
const waitTimeout = 4 * time.Minute

// check looks at one object: done, with a line saying what it shows, or
// not yet, with a line saying why.
type check func(ctx context.Context, c client.Client, o *unstructured.Unstructured) (bool, string, error)

// waitEach waits until chk is done for every object, printing a line for
// each as it gets there; on timeout the error says why each one left is
// not done.
func (e *Env) waitEach(ctx context.Context, out io.Writer, since time.Time, objs []*unstructured.Unstructured, chk check) error {
	done := map[int]bool{}
	why := map[int]string{}
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, waitTimeout, true, func(ctx context.Context) (bool, error) {
		for i, o := range objs {
			if done[i] {
				continue
			}
			ok, line, err := chk(ctx, e.Client, o)
			if err != nil && ctx.Err() != nil {
				return false, nil // the poll reports its own timeout
			}
			if err != nil {
				return false, err
			}
			if !ok {
				why[i] = line
				continue
			}
			done[i] = true
			fmt.Fprintf(out, "  %-38s %s (%s)\n", o.GetKind()+"/"+o.GetName(), line, time.Since(since).Round(time.Second))
		}
		return len(done) == len(objs), nil
	})
	if err != nil {
		var left []string
		for i, o := range objs {
			if !done[i] {
				left = append(left, fmt.Sprintf("%s/%s: %s", o.GetKind(), o.GetName(), why[i]))
			}
		}
		if ctx.Err() == nil && wait.Interrupted(err) {
			err = fmt.Errorf("timed out after %s", waitTimeout)
		}
		return fmt.Errorf("%w; still waiting for %s", err, strings.Join(left, "; "))
	}
	return nil
}

// fresh reads the object's current state; nil when it does not exist.
func fresh(ctx context.Context, c client.Client, o *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(o.GroupVersionKind())
	err := c.Get(ctx, client.ObjectKeyFromObject(o), u)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return u, err
}

// readiness is an object's Ready condition in a few words.
func readiness(u *unstructured.Unstructured) string {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Ready" {
			return fmt.Sprintf("Ready=%v %v: %v", m["status"], m["reason"], m["message"])
		}
	}
	return "no Ready condition yet"
}

// provisioned is done once CAPTF's object is provisioned.
func provisioned(ctx context.Context, c client.Client, o *unstructured.Unstructured) (bool, string, error) {
	u, err := fresh(ctx, c, o)
	if u == nil || err != nil {
		return false, "not found", err
	}
	if ok, _, _ := unstructured.NestedBool(u.Object, "status", "initialization", "provisioned"); !ok {
		return false, readiness(u), nil
	}
	switch u.GetKind() {
	case "TerraformCluster":
		host, _, _ := unstructured.NestedString(u.Object, "spec", "controlPlaneEndpoint", "host")
		port, _, _ := unstructured.NestedInt64(u.Object, "spec", "controlPlaneEndpoint", "port")
		return true, fmt.Sprintf("provisioned, endpoint %s:%d", host, port), nil
	case "TerraformMachine":
		id, _, _ := unstructured.NestedString(u.Object, "spec", "providerID")
		return true, "provisioned, providerID " + id, nil
	}
	ids, _, _ := unstructured.NestedStringSlice(u.Object, "spec", "providerIDList")
	return true, fmt.Sprintf("provisioned, %d instances: %s", len(ids), strings.Join(ids, ", ")), nil
}

// adopted is done once Cluster API took the infrastructure's results.
func adopted(ctx context.Context, c client.Client, o *unstructured.Unstructured) (bool, string, error) {
	u, err := fresh(ctx, c, o)
	if u == nil || err != nil {
		return false, "not found", err
	}
	phase, _, _ := unstructured.NestedString(u.Object, "status", "phase")
	switch u.GetKind() {
	case "Cluster":
		ok, _, _ := unstructured.NestedBool(u.Object, "status", "initialization", "infrastructureProvisioned")
		host, _, _ := unstructured.NestedString(u.Object, "spec", "controlPlaneEndpoint", "host")
		return ok && host != "", fmt.Sprintf("infrastructure provisioned, endpoint %s, phase %s", host, phase), nil
	case "Machine":
		id, _, _ := unstructured.NestedString(u.Object, "spec", "providerID")
		return id != "", fmt.Sprintf("providerID %s, phase %s", id, phase), nil
	}
	// A MachinePool copies the providerIDs only once it reaches the
	// workload cluster's API server, which this environment does not run.
	ok, _, _ := unstructured.NestedBool(u.Object, "status", "initialization", "infrastructureProvisioned")
	return ok, fmt.Sprintf("infrastructure provisioned, phase %s (no workload cluster runs here to hold its nodes)", phase), nil
}

// gone is done once the object is deleted.
func gone(ctx context.Context, c client.Client, o *unstructured.Unstructured) (bool, string, error) {
	u, err := fresh(ctx, c, o)
	switch {
	case err != nil:
		return false, "", err
	case u != nil:
		return false, "being deleted; " + readiness(u), nil
	}
	for _, k := range workloadKinds {
		if o.GetKind() == k {
			return true, "destroyed and deleted", nil
		}
	}
	return true, "deleted", nil
}

// destroyRuns finds, for each CAPTF object, the successful destroy the
// local node ran for it.
func (e *Env) destroyRuns(infra []*unstructured.Unstructured) ([]localnode.Run, error) {
	var out []localnode.Run
	runs := e.Node.Runs()
	for _, o := range infra {
		owner := state.OwnerLabels(o.GetKind(), o.GetName(), "")
		found := false
		for _, r := range runs {
			if r.Namespace == o.GetNamespace() && r.Labels[infrav1.OperationLabel] == string(infrav1.OperationDestroy) &&
				r.Labels[infrav1.OwnerKindLabel] == owner[state.LabelOwnerKind] &&
				r.Labels[infrav1.OwnerNameLabel] == owner[state.LabelOwnerName] && r.ExitCode == 0 {
				out, found = append(out, r), true
				break
			}
		}
		if !found {
			return nil, fmt.Errorf("%s/%s is gone, but no destroy Job of it succeeded on the local node", o.GetKind(), o.GetName())
		}
	}
	return out, nil
}

// waitNothingLeft waits until the quickstart's objects are gone and
// nothing CAPTF made for them remains: no managed Secret (state, per-run,
// plan key, credentials mirror), Lease, Job or pod in their namespace.
func (e *Env) waitNothingLeft(ctx context.Context, objs []*unstructured.Unstructured) error {
	var left []string
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		left = nil
		for _, o := range withoutKind(objs, "Namespace") {
			if ok, err := exists(ctx, e.Client, o); err != nil || ok {
				left = append(left, o.GetKind()+"/"+o.GetName())
			}
		}
		ns := client.InNamespace(QuickstartNamespace)
		lists := []struct {
			kind string
			list client.ObjectList
			opts []client.ListOption
		}{
			{"Secret", &corev1.SecretList{}, []client.ListOption{ns, client.MatchingLabels{infrav1.ManagedLabel: "true"}}},
			{"Lease", &coordinationv1.LeaseList{}, []client.ListOption{ns}},
			{"Job", &batchv1.JobList{}, []client.ListOption{ns}},
			{"Pod", &corev1.PodList{}, []client.ListOption{ns}},
		}
		for _, l := range lists {
			if err := e.Client.List(ctx, l.list, l.opts...); err != nil {
				return false, err
			}
			items, err := meta.ExtractList(l.list)
			if err != nil {
				return false, err
			}
			for _, it := range items {
				left = append(left, l.kind+"/"+it.(metav1.Object).GetName())
			}
		}
		sort.Strings(left)
		return len(left) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("something was left behind: %s (%w)", strings.Join(left, ", "), err)
	}
	return nil
}
