package workload

import (
	"context"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/jobs"
	"captf.io/captf/internal/roles"
	"captf.io/captf/pkg/state"
)

// shard is a manager's share of the objects of one kind under
// --watch-filter: every watch of the kind's controller maps its events to
// objects through it, so that an object of another shard is never
// enqueued (the pass checks the label again on the object it reads live).
type shard struct {
	reader client.Reader
	role   roles.Role
	// value is the --watch-filter value; empty admits every object.
	value string
}

// admits reports whether o is this shard's.
func (s shard) admits(o client.Object) bool {
	return s.value == "" || o.GetLabels()[infrav1.WatchFilterLabel] == s.value
}

// keep drops the requests for objects of other shards, reading them from
// the cache. A request for an object that is gone is kept: its pass only
// sweeps the Jobs labelled with this shard's value.
func (s shard) keep(ctx context.Context, reqs []reconcile.Request) []reconcile.Request {
	if s.value == "" {
		return reqs
	}
	out := reqs[:0]
	for _, req := range reqs {
		obj := s.role.New()
		err := s.reader.Get(ctx, req.NamespacedName, obj)
		if apierrors.IsNotFound(err) || (err == nil && s.admits(obj)) {
			out = append(out, req)
		}
	}
	return out
}

// mapped wraps a map function so that it enqueues this shard's objects only.
func (s shard) mapped(f handler.MapFunc) handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
		return s.keep(ctx, f(ctx, o))
	})
}

// echoes tells the echo of the engine's own status write from any other
// update of an object, and forgets what it keeps of a deleted one
// (workspace.Engine).
type echoes interface {
	OwnEcho(client.Object) bool
	Gone(client.Object)
}

// jobEchoes tells the events of a Job that echo the engine's own writes
// (workspace.Engine).
type jobEchoes interface {
	OwnJobCreate(client.Object) bool
	OwnJobUpdate(*batchv1.Job) bool
	ForgetJobEcho(client.Object)
}

// ownJobs drops the events of a Job of kind's objects that only echo the
// engine's own writes: its creation by the pass that reports it, and the
// bookkeeping marks of the pass that recorded its outcome
// (echo.Filter.OwnJobCreate, OwnJobUpdate). It comes after jobRead,
// so that only an update a pass reads ends what the engine expects; and
// it asks only about the Jobs of its own kind, as the three kinds'
// controllers all watch Jobs and the first to ask ends the expectation.
func ownJobs(ech jobEchoes, kind string) predicate.Predicate {
	kindLabel := state.OwnerLabels(kind, "", "")[state.LabelOwnerKind]
	ours := func(o client.Object) bool { return o.GetLabels()[infrav1.OwnerKindLabel] == kindLabel }
	return predicate.Funcs{
		CreateFunc: func(e event.CreateEvent) bool { return !ours(e.Object) || !ech.OwnJobCreate(e.Object) },
		UpdateFunc: func(e event.UpdateEvent) bool {
			j, ok := e.ObjectNew.(*batchv1.Job)
			return !ok || !ours(j) || !ech.OwnJobUpdate(j)
		},
		DeleteFunc: func(e event.DeleteEvent) bool {
			if ours(e.Object) {
				ech.ForgetJobEcho(e.Object)
			}
			return true
		},
	}
}

// own is the predicate of the kind's own objects: this shard's; of their
// updates, a resync (the periodic pass), and any other that changed more
// than the managed fields (a Cluster API MachineSet applies the labels
// and annotations it propagates again and again, and an apply that takes
// over a field moves only them) and is not the echo of the engine's own
// status write (see echo.Filter.OwnEcho). The echo is looked at
// first, so that every update of the object, this shard's or not, ends
// what the engine expects of it. An object relabelled to another shard is
// forgotten as a deleted one is: the other shard's manager keeps it now,
// and what this one kept (its live reports' records) would be stale
// should it come back.
func (s shard) own(ech echoes) predicate.Predicate {
	return predicate.And(predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			if s.admits(e.ObjectOld) && !s.admits(e.ObjectNew) {
				ech.Gone(e.ObjectNew)
				return false
			}
			if e.ObjectOld.GetResourceVersion() == e.ObjectNew.GetResourceVersion() {
				return true
			}
			return !ech.OwnEcho(e.ObjectNew) && beyondVersion.Update(e)
		},
		DeleteFunc: func(e event.DeleteEvent) bool {
			ech.Gone(e.Object)
			return true
		},
	}, predicate.NewPredicateFuncs(s.admits))
}

// beyondVersion passes an update that changed more than what every write
// changes (unversioned).
var beyondVersion = readChanged(func(o client.Object) client.Object { return roles.Unversioned(o.DeepCopyObject().(client.Object)) })

// jobToObject maps a Job of the kind's objects to its object: the
// controller owner, or, for a Job without one (started while its object
// was being deleted), the object its captf.io/owner annotation names.
// Under --watch-filter a Job labelled for another shard maps to nothing,
// so that the sweep of a gone object's Jobs stays in its own shard.
func (s shard) jobToObject(ctx context.Context, o client.Object) []reconcile.Request {
	if s.value != "" && o.GetLabels()[infrav1.WatchFilterLabel] != s.value && metav1.GetControllerOf(o) == nil {
		return nil
	}
	if reqs := ownerToObject(s.role.Kind())(ctx, o); len(reqs) > 0 {
		return reqs
	}
	return unownedJobToObject(s.role.Kind())(ctx, o)
}

// podToObject maps a pod of one of CAPTF's Jobs to the object the Job
// runs for (jobToObject), reading the Job, named by the pod's job-name
// label, from the cache. A pod whose Job the cache does not hold (yet, or
// any more) maps to nothing: the object's pass reads the pod at its
// requeue all the same.
func (s shard) podToObject(ctx context.Context, o client.Object) []reconcile.Request {
	name := o.GetLabels()[batchv1.JobNameLabel]
	if name == "" {
		return nil
	}
	job := &batchv1.Job{}
	if err := s.reader.Get(ctx, client.ObjectKey{Namespace: o.GetNamespace(), Name: name}, job); err != nil {
		return nil
	}
	return s.jobToObject(ctx, job)
}

// ownerToObject maps an object controlled by one of kind's objects (a Job,
// a TerraformPlan) to that object.
func ownerToObject(kind string) handler.MapFunc {
	return func(_ context.Context, o client.Object) []reconcile.Request {
		ref := metav1.GetControllerOf(o)
		if ref == nil || ref.Kind != kind {
			return nil
		}
		if gv, err := schema.ParseGroupVersion(ref.APIVersion); err != nil || gv.Group != infrav1.GroupVersion.Group {
			return nil
		}
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: o.GetNamespace(), Name: ref.Name}}}
	}
}

// unownedJobToObject maps a Job of kind's objects that has no owner
// reference (one started while its object was being deleted) to its
// object, named by the Job's captf.io/owner annotation.
func unownedJobToObject(kind string) handler.MapFunc {
	kindLabel := state.OwnerLabels(kind, "", "")[state.LabelOwnerKind]
	return func(_ context.Context, o client.Object) []reconcile.Request {
		name := o.GetAnnotations()[infrav1.OwnerAnnotation]
		if metav1.GetControllerOf(o) != nil || o.GetLabels()[infrav1.OwnerKindLabel] != kindLabel || name == "" {
			return nil
		}
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: jobs.ObjectNamespace(o), Name: name}}}
	}
}
