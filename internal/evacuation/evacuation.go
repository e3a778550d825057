package evacuation

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
)

// Prefix starts the name of every evacuation namespace.
const Prefix = "captf-evac-"

// StateCopiedAnnotation on an evacuation namespace says that the object's
// state was copied in whole: from then on, once no Job runs, the copy
// there is the newer one and is copied back (SyncState).
const StateCopiedAnnotation = "captf.io/state-copied"

// Name is the evacuation namespace of the object with uid.
func Name(uid types.UID) string { return Prefix + string(uid) }

// IsName reports whether ns is named as an evacuation namespace.
func IsName(ns string) bool { return strings.HasPrefix(ns, Prefix) }

// podSecurityPrefix starts the Pod Security admission labels, which an
// evacuation namespace takes from the object's namespace.
const podSecurityPrefix = "pod-security.kubernetes.io/"

// Ensure creates the evacuation namespace of obj (kind is its kind), with
// the Pod Security labels of obj's namespace, or finds it. It returns a
// message, and no namespace, while the namespace cannot be used: it is
// being deleted, or a namespace of that name exists that CAPTF did not
// create for this object (never touched).
func Ensure(ctx context.Context, c client.Client, r client.Reader, kind string, obj client.Object) (*corev1.Namespace, string, error) {
	ns := &corev1.Namespace{}
	err := r.Get(ctx, client.ObjectKey{Name: Name(obj.GetUID())}, ns)
	if apierrors.IsNotFound(err) {
		home := &corev1.Namespace{}
		if err := r.Get(ctx, client.ObjectKey{Name: obj.GetNamespace()}, home); client.IgnoreNotFound(err) != nil {
			return nil, "", fmt.Errorf("reading namespace %s: %w", obj.GetNamespace(), err)
		}
		labels := map[string]string{infrav1.ManagedLabel: "true", infrav1.EvacuatedFromUIDLabel: string(obj.GetUID())}
		for k, v := range home.Labels {
			if strings.HasPrefix(k, podSecurityPrefix) {
				labels[k] = v
			}
		}
		ns = &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
			Name:        Name(obj.GetUID()),
			Labels:      labels,
			Annotations: map[string]string{infrav1.EvacuatedFromAnnotation: fmt.Sprintf("%s %s/%s", kind, obj.GetNamespace(), obj.GetName())},
		}}
		if err := c.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, "", fmt.Errorf("creating the evacuation namespace %s: %w", ns.Name, err)
		}
		if err := r.Get(ctx, client.ObjectKeyFromObject(ns), ns); err != nil {
			return nil, "", fmt.Errorf("reading the evacuation namespace %s: %w", ns.Name, err)
		}
	} else if err != nil {
		return nil, "", fmt.Errorf("reading the evacuation namespace %s: %w", ns.Name, err)
	}
	switch {
	case ns.Labels[infrav1.EvacuatedFromUIDLabel] != string(obj.GetUID()):
		return nil, fmt.Sprintf("namespace %s exists and CAPTF did not create it for this object (no label %s=%s); CAPTF never uses it: delete or rename it",
			ns.Name, infrav1.EvacuatedFromUIDLabel, obj.GetUID()), nil
	case ns.DeletionTimestamp != nil:
		return nil, fmt.Sprintf("the evacuation namespace %s is still being deleted", ns.Name), nil
	}
	return ns, "", nil
}

// Find returns the evacuation namespace of uid, or nil when there is none
// (or the namespace of that name is not CAPTF's for uid).
func Find(ctx context.Context, r client.Reader, uid types.UID) (*corev1.Namespace, error) {
	ns := &corev1.Namespace{}
	if err := r.Get(ctx, client.ObjectKey{Name: Name(uid)}, ns); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	if ns.Labels[infrav1.EvacuatedFromUIDLabel] != string(uid) {
		return nil, nil
	}
	return ns, nil
}

// MarkStateCopied records on ns that the state was copied in whole.
func MarkStateCopied(ctx context.Context, c client.Client, ns *corev1.Namespace) error {
	if ns.Annotations[StateCopiedAnnotation] == "true" {
		return nil
	}
	patch := client.MergeFrom(ns.DeepCopy())
	if ns.Annotations == nil {
		ns.Annotations = map[string]string{}
	}
	ns.Annotations[StateCopiedAnnotation] = "true"
	return c.Patch(ctx, ns, patch)
}

// Remove deletes the evacuation namespace of uid, and everything in it,
// when there is one; a namespace of that name CAPTF did not create for uid
// is left alone.
func Remove(ctx context.Context, c client.Client, r client.Reader, uid types.UID) error {
	ns, err := Find(ctx, r, uid)
	if err != nil || ns == nil || ns.DeletionTimestamp != nil {
		return err
	}
	if err := c.Delete(ctx, ns, client.Preconditions{UID: &ns.UID}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting the evacuation namespace %s: %w", ns.Name, err)
	}
	return nil
}
