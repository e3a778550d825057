package runnerrbac

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/evacuation"
	"captf.io/captf/internal/jobs"
	"captf.io/captf/internal/roles"
)

// Sweeper runs the orphan sweep on the leader: at start, then every
// Period with up to 10% jitter. It ignores --watch-filter: an object of
// another shard still keeps its namespace.
type Sweeper struct {
	// Client deletes and patches; Reader reads live.
	Client client.Client
	Reader client.Reader
	// Cache, when set, is where the periodic inventory reads the CAPTF
	// objects and Jobs: the manager's cache, which holds every one of them
	// in scope (a live list of every TerraformMachine, decoded, was most of
	// an idle fleet's CPU). What the sweep deletes or prunes it reads live.
	Cache client.Reader
	// Namespace, when set, is the only namespace swept (--namespace).
	Namespace string
	// Period is the manager's --sync-period.
	Period time.Duration
}

// NeedLeaderElection: only the leader sweeps.
func (s *Sweeper) NeedLeaderElection() bool { return true }

// Start sweeps until ctx ends.
func (s *Sweeper) Start(ctx context.Context) error {
	ctx = ctrl.LoggerInto(ctx, ctrl.Log.WithName("orphan-sweep"))
	for {
		if err := s.SweepAll(ctx); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "Sweeping the runner RBAC")
		}
		wait := s.Period + time.Duration(rand.Int64N(int64(s.Period)/10+1))
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
	}
}

// SweepAll sweeps every namespace in scope from one inventory (seven
// lists, whatever the number of namespaces); a namespace that fails is
// logged and the others go on.
func (s *Sweeper) SweepAll(ctx context.Context) error {
	var opts []client.ListOption
	if s.Namespace != "" {
		opts = append(opts, client.InNamespace(s.Namespace))
	}
	objects := s.Cache
	if objects == nil {
		objects = s.Reader
	}
	inv, err := take(ctx, objects, s.Reader, opts...)
	if err != nil {
		return err
	}
	for ns := range inv.namespaces() {
		if err := inv.sweep(ctx, s.Client, s.Reader, ns); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "Sweeping the runner RBAC", "namespace", ns)
		}
	}
	return nil
}

// Sweep is the sweep of one namespace: with no TerraformCluster,
// TerraformMachine or TerraformMachinePool left in it and no CAPTF Job
// running there, CAPTF's ServiceAccounts, RoleBindings and Leases
// (captf.io/managed=true) go; otherwise the RoleBinding captf-runner keeps
// only the ServiceAccounts in use (each object's own, else its cluster's
// default, else captf-runner, and those of the Jobs still running) that
// may still run Jobs.
func Sweep(ctx context.Context, c client.Client, r client.Reader, ns string) error {
	inv, err := take(ctx, r, r, client.InNamespace(ns))
	if err != nil {
		return err
	}
	return inv.sweep(ctx, c, r, ns)
}

// SweepIfEmpty sweeps ns only when it holds no CAPTF object any more
// (one object of each kind at most is read): the check after a finalizer
// removal, cheap when a namespace's objects go one by one. Pruning waits
// for the periodic sweep.
func SweepIfEmpty(ctx context.Context, c client.Client, r client.Reader, ns string) error {
	for _, list := range []client.ObjectList{&infrav1.TerraformClusterList{}, &infrav1.TerraformMachineList{}, &infrav1.TerraformMachinePoolList{}} {
		if err := r.List(ctx, list, client.InNamespace(ns), client.Limit(1)); err != nil {
			return fmt.Errorf("listing the CAPTF objects: %w", err)
		}
		if meta.LenList(list) > 0 {
			return nil
		}
	}
	return Sweep(ctx, c, r, ns)
}

// inventory is what the sweep decides on, by namespace.
type inventory struct {
	objects   map[string][]client.Object
	clusters  map[string][]*infrav1.TerraformCluster
	running   map[string]map[string]bool // the ServiceAccounts of unfinished Jobs
	leftovers map[string][]client.Object // managed ServiceAccounts, RoleBindings, Leases
}

// take reads the inventory: the CAPTF objects and Jobs from objects, what
// CAPTF left (ServiceAccounts, RoleBindings, Leases) from live.
func take(ctx context.Context, objects, live client.Reader, opts ...client.ListOption) (*inventory, error) {
	inv := &inventory{objects: map[string][]client.Object{}, clusters: map[string][]*infrav1.TerraformCluster{},
		running: map[string]map[string]bool{}, leftovers: map[string][]client.Object{}}
	each := func(r client.Reader, list client.ObjectList, opts []client.ListOption, f func(client.Object)) error {
		if err := r.List(ctx, list, opts...); err != nil {
			return err
		}
		return meta.EachListItem(list, func(o runtime.Object) error { f(o.(client.Object)); return nil })
	}
	for _, list := range []client.ObjectList{&infrav1.TerraformClusterList{}, &infrav1.TerraformMachineList{}, &infrav1.TerraformMachinePoolList{}} {
		if err := each(objects, list, opts, func(o client.Object) {
			inv.objects[o.GetNamespace()] = append(inv.objects[o.GetNamespace()], o)
			if tc, ok := o.(*infrav1.TerraformCluster); ok {
				inv.clusters[o.GetNamespace()] = append(inv.clusters[o.GetNamespace()], tc)
			}
		}); err != nil {
			return nil, fmt.Errorf("listing the CAPTF objects: %w", err)
		}
	}
	managed := append([]client.ListOption{client.MatchingLabels{infrav1.ManagedLabel: "true"}}, opts...)
	if err := each(objects, &batchv1.JobList{}, managed, func(o client.Object) {
		j := o.(*batchv1.Job)
		if finished, _, _, _ := jobs.Finished(j); finished {
			return
		}
		if inv.running[j.Namespace] == nil {
			inv.running[j.Namespace] = map[string]bool{}
		}
		inv.running[j.Namespace][j.Spec.Template.Spec.ServiceAccountName] = true
	}); err != nil {
		return nil, fmt.Errorf("listing the CAPTF Jobs: %w", err)
	}
	for _, list := range []client.ObjectList{&corev1.ServiceAccountList{}, &rbacv1.RoleBindingList{}, &coordinationv1.LeaseList{}} {
		if err := each(live, list, managed, func(o client.Object) {
			inv.leftovers[o.GetNamespace()] = append(inv.leftovers[o.GetNamespace()], o)
		}); err != nil {
			return nil, fmt.Errorf("listing what CAPTF left: %w", err)
		}
	}
	return inv, nil
}

// namespaces are those with something to sweep: CAPTF's leftovers. An
// evacuation namespace holds no CAPTF object by design; it goes whole with
// its object.
func (inv *inventory) namespaces() map[string]bool {
	out := map[string]bool{}
	for ns := range inv.leftovers {
		if !evacuation.IsName(ns) {
			out[ns] = true
		}
	}
	return out
}

func (inv *inventory) sweep(ctx context.Context, c client.Client, r client.Reader, ns string) error {
	if len(inv.objects[ns]) > 0 || len(inv.running[ns]) > 0 {
		names := inUse(inv.objects[ns], inv.clusters[ns])
		for sa := range inv.running[ns] {
			names[sa] = true
		}
		return prune(ctx, c, r, ns, names)
	}
	if len(inv.leftovers[ns]) == 0 {
		return nil
	}
	// Looked at again just before deleting: an object created, or a Job
	// started, since the inventory keeps the namespace.
	again, err := take(ctx, r, r, client.InNamespace(ns))
	if err != nil {
		return err
	}
	if len(again.objects[ns]) > 0 || len(again.running[ns]) > 0 {
		return nil
	}
	for _, obj := range again.leftovers[ns] {
		uid := obj.GetUID()
		if err := c.Delete(ctx, obj, client.Preconditions{UID: &uid}); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return err
		}
		ctrl.LoggerFrom(ctx).Info("Deleted an orphan of a namespace without CAPTF objects", "namespace", ns, "kind", fmt.Sprintf("%T", obj), "name", obj.GetName())
	}
	return nil
}

// inUse names the ServiceAccounts the objects' Jobs run as. A machine or
// pool whose cluster cannot be found by its cluster-name label could
// inherit from any cluster: every cluster's default is kept then.
func inUse(objs []client.Object, clusters []*infrav1.TerraformCluster) map[string]bool {
	byCluster := map[string]*infrav1.TerraformCluster{}
	for _, tc := range clusters {
		byCluster[roles.ClusterNameOf(tc)] = tc
	}
	names := map[string]bool{}
	unresolved := false
	for _, o := range objs {
		role := roles.Of(o)
		var tc *infrav1.TerraformCluster
		if _, isCluster := o.(*infrav1.TerraformCluster); !isCluster {
			tc = byCluster[o.GetLabels()[infrav1.ClusterNameLabel]]
			unresolved = unresolved || tc == nil
		}
		names[roles.Resolve(role.Kind(), role.View(o), tc, 0).Policy.ServiceAccountName] = true
	}
	if unresolved {
		for _, tc := range clusters {
			var defaults *infrav1.JobsSpec
			if tc.Spec.Defaults != nil {
				defaults = tc.Spec.Defaults.Jobs
			}
			names[jobs.MergePolicy(nil, defaults, tc.Spec.Jobs).ServiceAccountName] = true
		}
	}
	return names
}

// prune keeps, of the managed RoleBinding's subjects, the ServiceAccounts
// of ns in use that may still run Jobs (captf-runner, or labelled
// captf.io/runner=true, or running a Job now).
func prune(ctx context.Context, c client.Client, r client.Reader, ns string, names map[string]bool) error {
	rb := &rbacv1.RoleBinding{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: ns, Name: ClusterRole}, rb); err != nil || rb.Labels[infrav1.ManagedLabel] != "true" {
		return client.IgnoreNotFound(err)
	}
	var keep []rbacv1.Subject
	for _, s := range rb.Subjects {
		if s.Kind != rbacv1.ServiceAccountKind || s.Namespace != ns || !names[s.Name] {
			continue
		}
		if s.Name != jobs.DefaultServiceAccountName {
			sa := &corev1.ServiceAccount{}
			if err := r.Get(ctx, client.ObjectKey{Namespace: ns, Name: s.Name}, sa); err != nil {
				if apierrors.IsNotFound(err) {
					continue
				}
				return err
			}
			if sa.Labels[infrav1.RunnerLabel] != "true" {
				continue
			}
		}
		keep = append(keep, s)
	}
	if len(keep) == len(rb.Subjects) {
		return nil
	}
	ctrl.LoggerFrom(ctx).Info("Pruned the runner RoleBinding to the ServiceAccounts in use", "namespace", ns, "before", len(rb.Subjects), "after", len(keep))
	err := setSubjects(ctx, c, rb, keep)
	if apierrors.IsConflict(err) {
		return nil // a pass wrote it meanwhile: the next sweep looks again
	}
	return err
}
