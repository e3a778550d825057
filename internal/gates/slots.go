package gates

import (
	"context"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/decide"
	"captf.io/captf/internal/jobs"
	"captf.io/captf/internal/roles"
	"captf.io/captf/pkg/state"
)

// backgroundShare is the share of a limit that refresh and drift Jobs may
// fill: the rest is kept for applies, destroys, plans and restores.
const backgroundShare = 0.8

// slotLimit is one Job limit; 0 means no cap.
type slotLimit struct {
	scope   string
	limit   int
	running int
}

// full reports whether a Job of op may not start under l.
func (l slotLimit) full(op decide.Operation) bool {
	if l.limit <= 0 {
		return false
	}
	if op == decide.OpRefresh || op == decide.OpDrift {
		return float64(l.running) >= backgroundShare*float64(l.limit)
	}
	return l.running >= l.limit
}

// Slot checks the manager-wide and the per-cluster Job limits from the
// Job cache (soft limits: no lock, they may overshoot by a few). It
// returns a message when the subject's Job of op must wait.
func (k Keeper) Slot(ctx context.Context, s Subject, op decide.Operation) (string, error) {
	o := k.Options
	perCluster := o.ClusterMaxActiveJobs
	if s.ClusterMaxActiveJobs != nil {
		perCluster = int(*s.ClusterMaxActiveJobs)
	}
	if o.MaxActiveJobs <= 0 && perCluster <= 0 {
		return "", nil
	}
	// A shard (--watch-filter) counts its own Jobs: another manager's are
	// held against that manager's limits.
	selector := client.MatchingLabels{infrav1.ManagedLabel: "true"}
	if o.WatchFilter != "" {
		selector[infrav1.WatchFilterLabel] = o.WatchFilter
	}
	var list batchv1.JobList
	if err := k.Client.List(ctx, &list, selector); err != nil {
		return "", err
	}
	clusterLabel := s.labels()[state.LabelClusterName]
	all := slotLimit{scope: "the manager (--max-active-jobs)", limit: o.MaxActiveJobs}
	cluster := slotLimit{scope: "cluster " + s.ClusterName + " (spec.maxActiveJobs or --cluster-max-active-jobs)", limit: perCluster}
	holders := map[types.UID]bool{}
	for i := range list.Items {
		j := &list.Items[i]
		if finished, _, _, _ := jobs.Finished(j); finished {
			continue
		}
		uid, err := k.slotHolder(ctx, j)
		if err != nil {
			return "", err
		}
		if uid == "" || holders[uid] {
			continue
		}
		holders[uid] = true
		all.running++
		if j.Namespace == s.Namespace && j.Labels[infrav1.ClusterNameLabel] == clusterLabel {
			cluster.running++
		}
	}
	for _, l := range []slotLimit{all, cluster} {
		if l.full(op) {
			return fmt.Sprintf("%d Jobs run for %s, whose limit is %d; the %s Job starts when one finishes", l.running, l.scope, l.limit, op), nil
		}
	}
	return "", nil
}

// slotHolder returns the UID of the object an unfinished Job holds a slot
// for, "" when it holds none. Only a Job whose owner (its controller
// reference, or the owner-uid and owner annotations of a deleting object's
// Job) is a live CAPTF object of the Job's kind label and namespace holds
// one, and an object holds at most one (CAPTF runs one Job per object at
// a time, so Slot counts each UID once): Jobs anyone with edit rights
// labels captf.io/managed=true cannot fill the limits.
func (k Keeper) slotHolder(ctx context.Context, j *batchv1.Job) (types.UID, error) {
	role, ok := roles.ForKind(j.Labels[infrav1.OwnerKindLabel])
	if !ok {
		return "", nil
	}
	name, uid := j.Annotations[infrav1.OwnerAnnotation], types.UID(j.Annotations[infrav1.OwnerUIDAnnotation])
	if ref := metav1.GetControllerOf(j); ref != nil {
		if ref.APIVersion != infrav1.GroupVersion.String() || ref.Kind != role.Kind() {
			return "", nil
		}
		name, uid = ref.Name, ref.UID
	}
	if name == "" || uid == "" {
		return "", nil
	}
	obj := role.New()
	if err := k.Client.Get(ctx, client.ObjectKey{Namespace: jobs.ObjectNamespace(j), Name: name}, obj); err != nil {
		return "", client.IgnoreNotFound(err)
	}
	if obj.GetUID() != uid {
		return "", nil
	}
	return uid, nil
}
