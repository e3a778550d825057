package machinetemplate

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/imagemeta"
	"captf.io/captf/internal/inputs"
	"captf.io/captf/internal/metrics"
)

// Retries of an image that cannot be read: 30 s, doubling to 10 min; a
// variables source not readable yet: 30 s.
const (
	RetryBase     = 30 * time.Second
	RetryMax      = 10 * time.Minute
	SourceRetry   = 30 * time.Second
	inspectBudget = 20 * time.Second
)

// Reconciler resolves TerraformMachineTemplates' status.
type Reconciler struct {
	// Client reads the templates (cached) and patches their status;
	// APIReader reads pull secrets and variables sources live.
	Client    client.Client
	APIReader client.Reader
	// Images reads the module images' labels.
	Images   imagemeta.Reader
	Recorder events.EventRecorder

	mu       sync.Mutex
	failures map[types.UID]int
}

// SetupWithManager registers the controller, concurrency templates at once.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, concurrency int) error {
	if r.Client == nil {
		r.Client = mgr.GetClient()
	}
	if r.APIReader == nil {
		r.APIReader = mgr.GetAPIReader()
	}
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorder("captf-manager")
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&infrav1.TerraformMachineTemplate{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WithOptions(controller.Options{MaxConcurrentReconciles: concurrency}).
		Complete(r)
}

// Reconcile observes the template's image and variables, decides its
// status, and patches it once.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	tmt := &infrav1.TerraformMachineTemplate{}
	if err := r.Client.Get(ctx, req.NamespacedName, tmt); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !tmt.DeletionTimestamp.IsZero() || resolved(tmt) {
		r.forget(tmt.UID)
		return ctrl.Result{}, nil
	}
	spec := tmt.Spec.Template.Spec
	in, err := r.inspect(ctx, tmt)
	if err != nil {
		return ctrl.Result{}, err
	}
	sources, err := inputs.ReadSources(ctx, r.APIReader, tmt.Namespace, spec.VariablesFrom)
	if err != nil {
		return ctrl.Result{}, err
	}
	res := Resolve(tmt.Spec.Capacity, in, tmt.Status)
	vars, pending := Variables(in, spec.Variables, sources)

	before := tmt.DeepCopy()
	prev := meta.FindStatusCondition(tmt.Status.Conditions, infrav1.CapacityResolvedCondition)
	tmt.Status.Capacity, tmt.Status.NodeInfo, tmt.Status.CapacitySource = res.Capacity, res.NodeInfo, res.CapacitySource
	res.Condition.ObservedGeneration, vars.ObservedGeneration = tmt.Generation, tmt.Generation
	meta.SetStatusCondition(&tmt.Status.Conditions, res.Condition)
	meta.SetStatusCondition(&tmt.Status.Conditions, vars)
	if !equality.Semantic.DeepEqual(before.Status, tmt.Status) {
		if err := r.Client.Status().Patch(ctx, tmt, client.MergeFrom(before)); err != nil {
			return ctrl.Result{}, err
		}
	}
	r.report(tmt, in, res, prev)
	var after time.Duration
	if res.Retry {
		after = r.backoff(tmt.UID)
	} else {
		r.forget(tmt.UID)
	}
	if pending && (after == 0 || SourceRetry < after) {
		after = SourceRetry
	}
	return ctrl.Result{RequeueAfter: after}, nil
}

// resolved reports a template whose status already answers for its
// image and spec.capacity: its image is read once per reference.
func resolved(tmt *infrav1.TerraformMachineTemplate) bool {
	src := tmt.Status.CapacitySource
	if src == nil || src.Image != tmt.Spec.Template.Spec.Source.Image {
		return false
	}
	if len(tmt.Spec.Capacity) > 0 && (src.Source != "Spec" || !equality.Semantic.DeepEqual(tmt.Spec.Capacity, tmt.Status.Capacity)) {
		return false
	}
	if len(tmt.Spec.Capacity) == 0 && src.Source != "Image" {
		return false
	}
	c := meta.FindStatusCondition(tmt.Status.Conditions, infrav1.CapacityResolvedCondition)
	v := meta.FindStatusCondition(tmt.Status.Conditions, infrav1.VariablesValidCondition)
	return c != nil && c.Reason != infrav1.ImageInspectFailedReason && !strings.HasPrefix(c.Message, notInspected) &&
		v != nil && v.Status != metav1.ConditionUnknown
}

// inspect reads the image's labels, authenticated with the template's own
// image pull Secrets.
func (r *Reconciler) inspect(ctx context.Context, tmt *infrav1.TerraformMachineTemplate) (Inspection, error) {
	spec := tmt.Spec.Template.Spec
	in := Inspection{Image: spec.Source.Image}
	var refs []corev1.LocalObjectReference
	if spec.Jobs != nil {
		refs = spec.Jobs.ImagePullSecrets
	}
	pull, err := imagemeta.ReadPullSecrets(ctx, r.APIReader, tmt.Namespace, refs)
	if err != nil {
		return in, err
	}
	ctx, cancel := context.WithTimeout(imagemeta.WithPullSecrets(ctx, pull), inspectBudget)
	defer cancel()
	in.Labels, in.Err = r.Images.Labels(ctx, in.Image)
	return in, nil
}

// report emits the events and counts the failures of a decision.
func (r *Reconciler) report(tmt *infrav1.TerraformMachineTemplate, in Inspection, res Resolved, prev *metav1.Condition) {
	if in.Err != nil {
		reason := "failed"
		if errors.Is(in.Err, imagemeta.ErrUnknownImage) {
			reason = "not_found"
		}
		metrics.ObserveImageInspectError(reason)
		failing := prev != nil && (prev.Reason == infrav1.ImageInspectFailedReason || strings.HasPrefix(prev.Message, notInspected))
		if !failing {
			r.Recorder.Eventf(tmt, nil, corev1.EventTypeWarning, infrav1.ImageInspectFailedReason, "Inspect", "%s", cut(fmt.Sprintf("Could not read image %s: %s", in.Image, in.Err), maxNote))
		}
	}
	if res.Condition.Reason == infrav1.CapacityLabelInvalidReason && (prev == nil || prev.Reason != infrav1.CapacityLabelInvalidReason) {
		metrics.ObserveImageInspectError("label_invalid")
	}
	if res.Changed {
		r.Recorder.Eventf(tmt, nil, corev1.EventTypeNormal, infrav1.CapacityResolvedCondition, "Resolve", "%s", cut(res.Condition.Message, maxNote))
	}
}

// backoff counts a failure of uid and returns the wait before the next try.
func (r *Reconciler) backoff(uid types.UID) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.failures == nil {
		r.failures = map[types.UID]int{}
	}
	n := r.failures[uid]
	r.failures[uid] = n + 1
	wait := RetryBase << min(n, 5)
	return min(wait, RetryMax)
}

func (r *Reconciler) forget(uid types.UID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.failures, uid)
}
