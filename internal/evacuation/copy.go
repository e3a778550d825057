package evacuation

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"captf.io/captf/internal/protection"
	"captf.io/captf/pkg/state"
)

// ErrCannotGrow is CopyBack's error when the copy back holds a state
// piece the object's namespace lacks: a terminating namespace refuses to
// create it.
var ErrCannotGrow = errors.New("the state grew a piece the terminating namespace cannot take")

// ErrNoBase is CopyIn's and CopyBack's error when the source lacks the base state
// Secret: no runtime deletes it, so its copy was lost, and nothing is
// copied (a copy back would delete the state).
var ErrNoBase = errors.New("the base state Secret is missing")

// CopySecret makes Secret name of namespace to a copy of the one of
// namespace from (data, type, labels and annotations; no owner, no
// finalizer). It reports false when from has no such Secret.
func CopySecret(ctx context.Context, c client.Client, r client.Reader, from, to, name string) (bool, error) {
	src := &corev1.Secret{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: from, Name: name}, src); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, fmt.Errorf("reading Secret %s/%s: %w", from, name, err)
	}
	dst := &corev1.Secret{}
	err := r.Get(ctx, client.ObjectKey{Namespace: to, Name: name}, dst)
	switch {
	case apierrors.IsNotFound(err):
		return true, create(ctx, c, src, to, false)
	case err != nil:
		return false, fmt.Errorf("reading Secret %s/%s: %w", to, name, err)
	}
	return true, update(ctx, c, src, dst)
}

// CopyIn makes the state pieces (base Secret and -part-N Secrets) of
// suffix in the evacuation namespace evac equal to those of the object's
// namespace home: changed content is updated, missing pieces are created
// (kept by the state protection, which Release lets go), pieces home
// lacks are deleted. It reports whether it wrote.
func CopyIn(ctx context.Context, c client.Client, r client.Reader, home, evac, suffix string) (bool, error) {
	return sync(ctx, c, r, home, evac, suffix, true)
}

// CopyBack makes the state pieces of suffix in home equal to those the
// Job left in evac: changed content is updated and the pieces the runtime
// deleted there (gone, or being deleted and kept by the protection) are
// deleted in home, then released in evac. It never creates a piece in
// home (a terminating namespace refuses it): ErrCannotGrow, nothing
// written. An evac without its base Secret is ErrNoBase, nothing written:
// no runtime deletes it, so the copy was lost.
func CopyBack(ctx context.Context, c client.Client, r client.Reader, evac, home, suffix string) (bool, error) {
	changed, err := sync(ctx, c, r, evac, home, suffix, false)
	if err != nil {
		return changed, err
	}
	all, err := pieces(ctx, r, evac, suffix, true)
	if err != nil {
		return changed, err
	}
	for _, s := range all {
		if protection.Terminating(s) {
			if err := protection.Release(ctx, c, s); err != nil {
				return changed, err
			}
		}
	}
	return changed, nil
}

// sync makes dst's pieces equal to src's; grow lets it create pieces
// (copy in; a copy back also takes a piece being deleted in src as
// deleted).
func sync(ctx context.Context, c client.Client, r client.Reader, src, dst, suffix string, grow bool) (bool, error) {
	from, err := pieces(ctx, r, src, suffix, grow)
	if err != nil {
		return false, err
	}
	to, err := pieces(ctx, r, dst, suffix, true)
	if err != nil {
		return false, err
	}
	if _, ok := from[state.SecretName(suffix)]; !ok {
		return false, fmt.Errorf("%w: %s in %s", ErrNoBase, state.SecretName(suffix), src)
	}
	if !grow {
		for name := range from {
			if _, ok := to[name]; !ok {
				return false, fmt.Errorf("%w: %s", ErrCannotGrow, name)
			}
		}
	}
	changed := false
	for _, name := range slices.Sorted(maps.Keys(from)) {
		s, d := from[name], to[name]
		switch {
		case d == nil:
			err = create(ctx, c, s, dst, true)
		case same(s, d):
			continue
		default:
			err = update(ctx, c, s, d)
		}
		if err != nil {
			return changed, err
		}
		changed = true
	}
	for _, name := range slices.Sorted(maps.Keys(to)) {
		if _, ok := from[name]; ok {
			continue
		}
		if err := protection.Delete(ctx, c, to[name]); err != nil {
			return changed, err
		}
		changed = true
	}
	return changed, nil
}

// pieces lists the state pieces of suffix in ns by name; those being
// deleted only when deleting.
func pieces(ctx context.Context, r client.Reader, ns, suffix string, deleting bool) (map[string]*corev1.Secret, error) {
	var list corev1.SecretList
	if err := r.List(ctx, &list, client.InNamespace(ns), client.MatchingLabelsSelector{Selector: state.Selector(suffix)}); err != nil {
		return nil, fmt.Errorf("listing the state Secrets in %s: %w", ns, err)
	}
	out := map[string]*corev1.Secret{}
	for i := range list.Items {
		if deleting || !protection.Terminating(&list.Items[i]) {
			out[list.Items[i].Name] = &list.Items[i]
		}
	}
	return out, nil
}

// same reports whether d already holds s's data, labels and annotations.
func same(s, d *corev1.Secret) bool {
	if len(s.Data) != len(d.Data) {
		return false
	}
	for k, v := range s.Data {
		if w, ok := d.Data[k]; !ok || !bytes.Equal(v, w) {
			return false
		}
	}
	for k, v := range s.Labels {
		if d.Labels[k] != v {
			return false
		}
	}
	for k, v := range s.Annotations {
		if d.Annotations[k] != v {
			return false
		}
	}
	return true
}

func create(ctx context.Context, c client.Client, src *corev1.Secret, ns string, protect bool) error {
	dst := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: src.Name, Labels: maps.Clone(src.Labels), Annotations: maps.Clone(src.Annotations)},
		Type:       src.Type,
		Data:       src.Data,
	}
	if protect {
		protection.Protect(dst)
	}
	if err := c.Create(ctx, dst); err != nil {
		return fmt.Errorf("copying Secret %s into %s: %w", src.Name, ns, err)
	}
	return nil
}

// update writes src's data, labels and annotations over d's, as read (an
// optimistic lock: a writer meanwhile makes the pass try again).
func update(ctx context.Context, c client.Client, src, d *corev1.Secret) error {
	d.Data = src.Data
	if d.Labels == nil {
		d.Labels = map[string]string{}
	}
	maps.Copy(d.Labels, src.Labels)
	if d.Annotations == nil {
		d.Annotations = map[string]string{}
	}
	maps.Copy(d.Annotations, src.Annotations)
	if err := c.Update(ctx, d); err != nil {
		return fmt.Errorf("copying Secret %s into %s: %w", src.Name, d.Namespace, err)
	}
	return nil
}

// CopySecrets copies the Secrets needed and optional from namespace from
// into to, each once, in name order (CopySecret); gone names the first
// needed one that is not in from ("" when none is missing), and nothing
// is copied after it.
func CopySecrets(ctx context.Context, c client.Client, r client.Reader, from, to string, needed, optional []string) (gone string, err error) {
	for _, name := range slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(needed), optional...)))) {
		found, err := CopySecret(ctx, c, r, from, to, name)
		if err != nil {
			return "", err
		}
		if !found && slices.Contains(needed, name) {
			return name, nil
		}
	}
	return "", nil
}

// Evacuate copies the state of suffix from home into the evacuation
// namespace ns, just before the Job that writes it there is created, and
// records on ns that the copy is whole.
func Evacuate(ctx context.Context, c client.Client, r client.Reader, home string, ns *corev1.Namespace, suffix string) error {
	if _, err := CopyIn(ctx, c, r, home, ns.Name, suffix); err != nil {
		return fmt.Errorf("copying the state into the evacuation namespace %s: %w", ns.Name, err)
	}
	return MarkStateCopied(ctx, c, ns)
}

// Abandon lets go of a copy that lost its base Secret (CopyBack's
// ErrNoBase): its pieces are released and ns no longer says the copy is
// whole, so the home namespace keeps the state it had and the next Job
// copies it in again.
func Abandon(ctx context.Context, c client.Client, r client.Reader, ns *corev1.Namespace) error {
	if err := Release(ctx, c, r, ns.Name); err != nil {
		return err
	}
	return UnmarkStateCopied(ctx, c, ns)
}

// HomePodRuns names a pod selector selects that still runs in the home
// namespace (a Job the namespace deletion stopped, its pod in its grace):
// no evacuated Job starts before it is gone, as it may write the state.
// "" when none runs.
func HomePodRuns(ctx context.Context, r client.Reader, home string, selector client.MatchingLabels) (string, error) {
	var pods corev1.PodList
	if err := r.List(ctx, &pods, client.InNamespace(home), selector); err != nil {
		return "", err
	}
	for _, pod := range pods.Items {
		if pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed {
			return fmt.Sprintf("Pod %s of this object still runs in namespace %s, and may write the state: the destroy waits for it to go", pod.Name, home), nil
		}
	}
	return "", nil
}
