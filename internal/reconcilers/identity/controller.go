package identity

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/credentials"
	"captf.io/captf/pkg/state"
)

// Requeue intervals: the source Secret is not watched.
const (
	// RecheckReady re-reads the source while Ready is True.
	RecheckReady = 5 * time.Minute
	// RecheckNotReady re-reads the source while Ready is False.
	RecheckNotReady = 30 * time.Second
)

// Event reasons of the identity, emitted when Ready changes.
const (
	// SecretFoundEvent (Normal): the source Secret appeared or became complete.
	SecretFoundEvent = "IdentitySecretFound"
	// SecretNotFoundEvent (Warning): the source Secret is missing or incomplete.
	SecretNotFoundEvent = "IdentitySecretNotFound"
)

// Reconciler reports the status of TerraformClusterIdentities.
type Reconciler struct {
	// Client reads identities and writes their status.
	Client client.Client
	// Mirrors lists the mirrors' metadata of every namespace: the
	// manager's cache when it watches every namespace (the manager's
	// client reads every Secret, metadata too, from the API server). Nil
	// lists through Client.
	Mirrors client.Reader
	// APIReader reads the source Secret uncached.
	APIReader client.Reader
	// Recorder emits the identity's events; nil emits none.
	Recorder events.EventRecorder
}

// SetupWithManager registers the controller. Nil fields are taken from mgr.
// Mirrors are watched by metadata so that status.namespaces follows them.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Client == nil {
		r.Client = mgr.GetClient()
	}
	if r.APIReader == nil {
		r.APIReader = mgr.GetAPIReader()
	}
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorder("captf-manager")
	}
	mirrors := predicate.NewPredicateFuncs(func(o client.Object) bool {
		return o.GetLabels()[infrav1.MirroredLabel] == "true"
	})
	return ctrl.NewControllerManagedBy(mgr).
		For(&infrav1.TerraformClusterIdentity{}).
		WatchesMetadata(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(mirrorToIdentity), builder.WithPredicates(mirrors)).
		Named("terraformclusteridentity").
		Complete(r)
}

func mirrorToIdentity(_ context.Context, o client.Object) []reconcile.Request {
	name := o.GetAnnotations()[infrav1.IdentityAnnotation]
	if name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: name}}}
}

// Reconcile observes the source Secret and the mirrors and patches the
// identity's status once.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	id := &infrav1.TerraformClusterIdentity{}
	if err := r.Client.Get(ctx, req.NamespacedName, id); err != nil {
		if apierrors.IsNotFound(err) {
			// Its mirrors may still be held for users that are gone.
			return ctrl.Result{}, r.releaseAbandoned(ctx, req.Name)
		}
		return ctrl.Result{}, err
	}
	snap, err := r.observe(ctx, id)
	if err != nil {
		// Ready is never Unknown: keep the last status and retry.
		return ctrl.Result{}, err
	}

	if err := r.releaseMirrors(ctx, id.Name, snap.mirrors); err != nil {
		return ctrl.Result{}, err
	}
	ready := readyCondition(snap)
	before := id.DeepCopy()
	previous := meta.FindStatusCondition(id.Status.Conditions, infrav1.ReadyCondition)
	r.emit(id, previous, ready)
	meta.SetStatusCondition(&id.Status.Conditions, ready)
	id.Status.Namespaces = usedNamespaces(snap)
	if !slices.Equal(before.Status.Namespaces, id.Status.Namespaces) || !conditionsEqual(before.Status.Conditions, id.Status.Conditions) {
		ctrl.LoggerFrom(ctx).V(2).Info("Patching identity status", "ready", ready.Reason, "namespaces", len(id.Status.Namespaces))
		if err := r.Client.Status().Patch(ctx, id, client.MergeFrom(before)); err != nil {
			return ctrl.Result{}, fmt.Errorf("patching status of TerraformClusterIdentity %s: %w", id.Name, err)
		}
	}
	if ready.Status == metav1.ConditionTrue {
		return ctrl.Result{RequeueAfter: RecheckReady}, nil
	}
	return ctrl.Result{RequeueAfter: RecheckNotReady}, nil
}

// observe does every read of a pass.
func (r *Reconciler) observe(ctx context.Context, id *infrav1.TerraformClusterIdentity) (snapshot, error) {
	snap := snapshot{identity: id}
	src := &corev1.Secret{}
	key := client.ObjectKey{Namespace: id.Spec.SecretRef.Namespace, Name: id.Spec.SecretRef.Name}
	switch err := r.APIReader.Get(ctx, key, src); {
	case err == nil:
		snap.source = src
	case !apierrors.IsNotFound(err):
		return snap, fmt.Errorf("reading source Secret %s of TerraformClusterIdentity %s: %w", key, id.Name, err)
	}
	mirrors, err := r.listMirrors(ctx)
	snap.mirrors = mirrors
	return snap, err
}

// listMirrors lists the metadata of every credentials mirror.
func (r *Reconciler) listMirrors(ctx context.Context) ([]metav1.PartialObjectMetadata, error) {
	reader := r.Mirrors
	if reader == nil {
		reader = r.Client
	}
	list := state.SecretMetadataList()
	if err := reader.List(ctx, list, client.MatchingLabels{infrav1.MirroredLabel: "true"}); err != nil {
		return nil, fmt.Errorf("listing credentials mirrors: %w", err)
	}
	return list.Items, nil
}

// emit records an event when Ready changes status or reason. A first
// Ready emits only when it starts bad, so a new identity stays quiet.
func (r *Reconciler) emit(id *infrav1.TerraformClusterIdentity, previous *metav1.Condition, ready metav1.Condition) {
	if r.Recorder == nil {
		return
	}
	if previous != nil && previous.Status == ready.Status && previous.Reason == ready.Reason {
		return
	}
	if ready.Status == metav1.ConditionTrue {
		if previous != nil {
			r.Recorder.Eventf(id, nil, corev1.EventTypeNormal, SecretFoundEvent, "CheckSecret", "%s", ready.Message)
		}
		return
	}
	r.Recorder.Eventf(id, nil, corev1.EventTypeWarning, SecretNotFoundEvent, "CheckSecret", "%s: %s", ready.Reason, ready.Message)
}

func conditionsEqual(a, b []metav1.Condition) bool {
	return slices.EqualFunc(a, b, func(x, y metav1.Condition) bool {
		return x.Type == y.Type && x.Status == y.Status && x.Reason == y.Reason && x.Message == y.Message &&
			x.ObservedGeneration == y.ObservedGeneration && x.LastTransitionTime.Equal(&y.LastTransitionTime)
	})
}

// releaseAbandoned lets go of the mirrors of a deleted identity whose
// users are all gone.
func (r *Reconciler) releaseAbandoned(ctx context.Context, identity string) error {
	mirrors, err := r.listMirrors(ctx)
	if err != nil {
		return err
	}
	return r.releaseMirrors(ctx, identity, mirrors)
}

// releaseMirrors releases the identity's mirrors the garbage collector is
// deleting once none of their users exists (see
// credentials.ReleaseAbandonedMirror).
func (r *Reconciler) releaseMirrors(ctx context.Context, identity string, mirrors []metav1.PartialObjectMetadata) error {
	for i := range mirrors {
		if m := &mirrors[i]; m.Annotations[infrav1.IdentityAnnotation] == identity {
			if _, err := credentials.ReleaseAbandonedMirror(ctx, r.Client, r.APIReader, m); err != nil {
				return err
			}
		}
	}
	return nil
}
