package runner

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/pkg/state"
)

// surplusTimeout bounds releasing surplus state pieces between two steps.
const surplusTimeout = 20 * time.Second

// releaseSurplus lets go of the state pieces Terraform deleted while the
// step that just ended shrank a chunked state, which the manager's
// protection (captf.io/state-protection) still keeps: the next step's
// read (a drift's plan after its refresh, a restore's state list after its
// push) would append them to the state. It is best effort: the manager
// does the same before the object's next Job.
func (r *run) releaseSurplus() {
	ctx, cancel := context.WithTimeout(context.Background(), surplusTimeout)
	defer cancel()
	n, err := releaseSurplus(ctx, r.o.BackendConfig)
	switch {
	case err != nil:
		fmt.Fprintln(r.env.Stderr, "Releasing the state pieces the runtime deleted failed:", err)
	case n > 0:
		fmt.Fprintf(r.env.Stderr, "Released %d state piece(s) the runtime deleted while the state shrank\n", n)
	}
}

// releaseSurplus removes the protection finalizer from the surplus state
// pieces (state.Surplus) of the backend's state and returns how many it
// released. A piece changed meanwhile is left to the manager.
func releaseSurplus(ctx context.Context, backendConfig []string) (int, error) {
	b, err := parseBackend(backendConfig)
	if err != nil {
		return 0, err
	}
	c, err := b.client()
	if err != nil {
		return 0, fmt.Errorf("reaching the API server: %w", err)
	}
	secrets := c.Secrets(b.namespace)
	list, err := secrets.List(ctx, metav1.ListOptions{LabelSelector: state.Selector(b.suffix).String()})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, name := range state.Surplus(b.suffix, list.Items) {
		i := slices.IndexFunc(list.Items, func(s corev1.Secret) bool { return s.Name == name })
		s := &list.Items[i]
		if !slices.Contains(s.Finalizers, infrav1.StateProtectionFinalizer) {
			continue
		}
		s.Finalizers = slices.DeleteFunc(slices.Clone(s.Finalizers), func(f string) bool { return f == infrav1.StateProtectionFinalizer })
		if _, err := secrets.Update(ctx, s, metav1.UpdateOptions{}); err != nil {
			if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
				continue
			}
			return n, fmt.Errorf("releasing %s: %w", name, err)
		}
		n++
	}
	return n, nil
}
