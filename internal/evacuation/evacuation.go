package evacuation

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/protection"
)

// Prefix starts the name of every evacuation namespace; a random suffix
// follows, so that nobody can make one in advance.
const Prefix = "captf-evac-"

// StateCopiedAnnotation on an evacuation namespace says that the object's
// state was copied in whole: from then on, once no Job runs, the copy
// there is the newer one and is copied back (CopyBack).
const StateCopiedAnnotation = "captf.io/state-copied"

// podSecurityPrefix starts the Pod Security admission labels, which an
// evacuation namespace takes from the object's namespace.
const podSecurityPrefix = "pod-security.kubernetes.io/"

// IsName reports whether ns is named as an evacuation namespace.
func IsName(ns string) bool { return strings.HasPrefix(ns, Prefix) }

// recorded is the evacuation namespace obj records (its
// captf.io/evacuation-namespace annotation, <name>/<uid>): the name, and
// the UID once CAPTF created it.
func recorded(obj client.Object) (string, types.UID) {
	name, uid, _ := strings.Cut(obj.GetAnnotations()[infrav1.EvacuationNamespaceAnnotation], "/")
	if !IsName(name) {
		return "", ""
	}
	return name, types.UID(uid)
}

// Find returns the evacuation namespace obj records, when it exists with
// the UID recorded: the one CAPTF created, never another of its name.
func Find(ctx context.Context, r client.Reader, obj client.Object) (*corev1.Namespace, error) {
	name, uid := recorded(obj)
	if name == "" || uid == "" {
		return nil, nil
	}
	ns := &corev1.Namespace{}
	if err := r.Get(ctx, client.ObjectKey{Name: name}, ns); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	if ns.UID != uid {
		return nil, nil
	}
	return ns, nil
}

// Ensure returns the evacuation namespace of obj (kind is its kind),
// creating one when obj records none that exists. A new one gets a random
// name, recorded on obj before it is created and with its UID after
// (patches of obj's annotations), the Pod Security labels of obj's
// namespace, and the labels captf.io/managed and
// captf.io/evacuated-from-uid. A namespace that exists under a recorded
// name without the recorded UID is someone else's: never used, another
// name is drawn. Ensure returns a message, and no namespace, while the
// recorded one is still being deleted.
func Ensure(ctx context.Context, c client.Client, r client.Reader, kind string, obj client.Object) (*corev1.Namespace, string, error) {
	ns, err := Find(ctx, r, obj)
	switch {
	case err != nil:
		return nil, "", err
	case ns != nil && ns.DeletionTimestamp != nil:
		return nil, fmt.Sprintf("the evacuation namespace %s is being deleted; another is made once it is gone", ns.Name), nil
	case ns != nil:
		return ns, "", nil
	}
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
	name, err := randomName()
	if err != nil {
		return nil, "", err
	}
	if err := record(ctx, c, obj, name); err != nil {
		return nil, "", err
	}
	ns = &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name:        name,
		Labels:      labels,
		Annotations: map[string]string{infrav1.EvacuatedFromAnnotation: fmt.Sprintf("%s %s/%s", kind, obj.GetNamespace(), obj.GetName())},
	}}
	if err := c.Create(ctx, ns); err != nil {
		// AlreadyExists: someone read the recorded name and was first; the
		// next pass draws another.
		return nil, "", fmt.Errorf("creating the evacuation namespace %s: %w", name, err)
	}
	if err := record(ctx, c, obj, name+"/"+string(ns.UID)); err != nil {
		return nil, "", err
	}
	return ns, "", nil
}

// record writes obj's captf.io/evacuation-namespace annotation.
func record(ctx context.Context, c client.Client, obj client.Object, value string) error {
	patch := client.MergeFrom(obj.DeepCopyObject().(client.Object))
	ann := obj.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[infrav1.EvacuationNamespaceAnnotation] = value
	obj.SetAnnotations(ann)
	if err := c.Patch(ctx, obj, patch); err != nil {
		return fmt.Errorf("recording the evacuation namespace on the object: %w", err)
	}
	return nil
}

func randomName() (string, error) {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return Prefix + hex.EncodeToString(b), nil
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

// UnmarkStateCopied records on ns that its state copy is no longer whole
// (it was lost): the next Job copies the state in again.
func UnmarkStateCopied(ctx context.Context, c client.Client, ns *corev1.Namespace) error {
	if _, ok := ns.Annotations[StateCopiedAnnotation]; !ok {
		return nil
	}
	patch := client.MergeFrom(ns.DeepCopy())
	delete(ns.Annotations, StateCopiedAnnotation)
	return c.Patch(ctx, ns, patch)
}

// Release lets the copies go that the protection keeps in ns (the state
// pieces), so that the namespace can finish deleting.
func Release(ctx context.Context, c client.Client, r client.Reader, ns string) error {
	var list corev1.SecretList
	if err := r.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return fmt.Errorf("listing the Secrets of the evacuation namespace %s: %w", ns, err)
	}
	for i := range list.Items {
		if err := protection.Release(ctx, c, &list.Items[i]); err != nil {
			return err
		}
	}
	return nil
}

// Remove deletes the evacuation namespace obj records, with everything in
// it (its copies released first); a namespace of that name CAPTF did not
// create is left alone.
func Remove(ctx context.Context, c client.Client, r client.Reader, obj client.Object) error {
	ns, err := Find(ctx, r, obj)
	if err != nil || ns == nil {
		return err
	}
	if err := Release(ctx, c, r, ns.Name); err != nil {
		return err
	}
	if ns.DeletionTimestamp != nil {
		return nil
	}
	if err := c.Delete(ctx, ns, client.Preconditions{UID: &ns.UID}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting the evacuation namespace %s: %w", ns.Name, err)
	}
	return nil
}
