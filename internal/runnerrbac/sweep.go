package runnerrbac

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/jobs"
	"captf.io/captf/internal/roles"
)

// Sweeper runs the orphan sweep on the leader: at start, then every
// Period with up to 10% jitter. It reads live and ignores --watch-filter:
// an object of another shard still keeps its namespace.
type Sweeper struct {
	// Client deletes and patches; Reader reads live.
	Client client.Client
	Reader client.Reader
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
		s.SweepAll(ctx)
		wait := s.Period + time.Duration(rand.Int64N(int64(s.Period)/10+1))
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
	}
}

// SweepAll sweeps every namespace in scope; failures are logged only.
func (s *Sweeper) SweepAll(ctx context.Context) {
	log := ctrl.LoggerFrom(ctx)
	namespaces := []string{s.Namespace}
	if s.Namespace == "" {
		var list corev1.NamespaceList
		if err := s.Reader.List(ctx, &list); err != nil {
			log.Error(err, "Listing the namespaces to sweep")
			return
		}
		namespaces = namespaces[:0]
		for _, ns := range list.Items {
			namespaces = append(namespaces, ns.Name)
		}
	}
	for _, ns := range namespaces {
		if err := Sweep(ctx, s.Client, s.Reader, ns); err != nil {
			log.Error(err, "Sweeping the runner RBAC", "namespace", ns)
		}
	}
}

// Sweep is the sweep of one namespace: with no TerraformCluster,
// TerraformMachine or TerraformMachinePool left in it, CAPTF's
// ServiceAccounts, RoleBindings and Leases (captf.io/managed=true) go;
// otherwise the RoleBinding captf-runner keeps only the ServiceAccounts in
// use (each object's own, else its cluster's default, else captf-runner)
// that may still run Jobs.
func Sweep(ctx context.Context, c client.Client, r client.Reader, ns string) error {
	var objs []client.Object
	var clusters []*infrav1.TerraformCluster
	for _, list := range []client.ObjectList{&infrav1.TerraformClusterList{}, &infrav1.TerraformMachineList{}, &infrav1.TerraformMachinePoolList{}} {
		if err := r.List(ctx, list, client.InNamespace(ns)); err != nil {
			return fmt.Errorf("listing the CAPTF objects: %w", err)
		}
		_ = meta.EachListItem(list, func(o runtime.Object) error {
			objs = append(objs, o.(client.Object))
			if tc, ok := o.(*infrav1.TerraformCluster); ok {
				clusters = append(clusters, tc)
			}
			return nil
		})
	}
	if len(objs) == 0 {
		return removeManaged(ctx, c, r, ns)
	}
	return prune(ctx, c, r, ns, inUse(objs, clusters))
}

// removeManaged deletes the managed ServiceAccounts, RoleBindings and
// Leases of an empty namespace.
func removeManaged(ctx context.Context, c client.Client, r client.Reader, ns string) error {
	managed := client.MatchingLabels{infrav1.ManagedLabel: "true"}
	for _, list := range []client.ObjectList{&corev1.ServiceAccountList{}, &rbacv1.RoleBindingList{}, &coordinationv1.LeaseList{}} {
		if err := r.List(ctx, list, client.InNamespace(ns), managed); err != nil {
			return err
		}
		err := meta.EachListItem(list, func(o runtime.Object) error {
			obj := o.(client.Object)
			uid := obj.GetUID()
			if err := c.Delete(ctx, obj, client.Preconditions{UID: &uid}); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
				return err
			}
			ctrl.LoggerFrom(ctx).Info("Deleted an orphan of a namespace without CAPTF objects", "namespace", ns, "kind", fmt.Sprintf("%T", obj), "name", obj.GetName())
			return nil
		})
		if err != nil {
			return err
		}
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
// captf.io/runner=true).
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
