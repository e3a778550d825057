package custody

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"captf.io/captf/internal/gates"
	"captf.io/captf/internal/jobs"
	"captf.io/captf/pkg/state"
)

// LockInfoAnnotation is where the kubernetes backend records who holds
// the state lock.
const LockInfoAnnotation = "app.terraform.io/lock-info"

// LockInfo is the backend's lock record.
type LockInfo struct {
	ID        string `json:"ID"`
	Operation string `json:"Operation"`
	Who       string `json:"Who"`
	Created   string `json:"Created"`
}

// Lock is a held state lock.
type Lock struct {
	// ID is the lock's ID (what a force-unlock names).
	ID   string
	Info LockInfo
	// Pod is the pod the lock names as its holder ("" when the holder is
	// not one of the object's Jobs).
	Pod string
}

// podOfHolder returns the pod name in a lock's Who (user@hostname) when the
// hostname is a pod of one of the object's Jobs: its Job name pattern,
// "-" and 5 characters.
func podOfHolder(who, kind, name string) string {
	host := who[strings.LastIndex(who, "@")+1:]
	if jobs.PodPattern(state.KindShort(kind), name).MatchString(host) {
		return host
	}
	return ""
}

// ReadLock reads the state lock Lease of the object (kind, name; its
// state suffix) in namespace, live: nil when nobody holds it.
func (k Keeper) ReadLock(ctx context.Context, namespace, suffix, kind, name string) (*Lock, error) {
	lease := &coordinationv1.Lease{}
	err := k.Reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: state.LockLeaseName(suffix)}, lease)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	holder := ptr.Deref(lease.Spec.HolderIdentity, "")
	raw := lease.Annotations[LockInfoAnnotation]
	if holder == "" && raw == "" {
		return nil, nil
	}
	l := &Lock{ID: holder}
	if json.Unmarshal([]byte(raw), &l.Info) == nil {
		if l.Info.ID != "" {
			l.ID = l.Info.ID
		}
		l.Pod = podOfHolder(l.Info.Who, kind, name)
	}
	return l, nil
}

// LockHolderDead reads the pod that l, a lock of one of the object's Jobs
// in namespace, names, that Job and the object's run lease, live, and
// decides with gates.HolderDead; deadline is the Jobs'
// activeDeadlineSeconds when the Job is gone, and o shortens the wait.
func (k Keeper) LockHolderDead(ctx context.Context, namespace, suffix string, l *Lock, deadline int64, now time.Time, o gates.Options) (bool, error) {
	var pods []corev1.Pod
	pod := &corev1.Pod{}
	if err := k.Reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: l.Pod}, pod); err == nil {
		pods = append(pods, *pod)
	} else if !apierrors.IsNotFound(err) {
		return false, err
	}
	if gates.HolderRuns(nil, pods) {
		return false, nil
	}
	jobName := l.Pod[:strings.LastIndex(l.Pod, "-")] // podOfHolder checked the Job name and suffix
	job := &batchv1.Job{}
	if err := k.Reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: jobName}, job); apierrors.IsNotFound(err) {
		job = nil
	} else if err != nil {
		return false, err
	}
	lease := &coordinationv1.Lease{}
	if err := k.Reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: gates.RunLeaseName(suffix)}, lease); apierrors.IsNotFound(err) {
		lease = nil
	} else if err != nil {
		return false, err
	}
	if job != nil && job.Spec.ActiveDeadlineSeconds != nil {
		deadline = *job.Spec.ActiveDeadlineSeconds
	}
	since, duration := LockSince(l.Info, lease, jobName, deadline)
	return gates.HolderDead(pods, since, now, o.HolderWait(job, duration)), nil
}

// LockSince is when the holder of a lock, a pod of Job jobName, was last
// known alive, and the lease duration to wait out after that: the later of
// the lock's creation and the run lease's renewal while the lease still
// names that Job (with its duration); without such a lease, the backstop
// of the Job's deadline. A zero time: nothing says, and the lock is never
// taken to be stale (the stale-lock runbook unlocks it by hand).
func LockSince(info LockInfo, runLease *coordinationv1.Lease, jobName string, deadline int64) (time.Time, time.Duration) {
	since, _ := time.Parse(time.RFC3339Nano, info.Created)
	duration := time.Duration(gates.Backstop(deadline)) * time.Second
	if runLease == nil || ptr.Deref(runLease.Spec.HolderIdentity, "") != jobName {
		return since, duration
	}
	renewed := runLease.CreationTimestamp.Time
	if runLease.Spec.RenewTime != nil {
		renewed = runLease.Spec.RenewTime.Time
	}
	if renewed.After(since) {
		since = renewed
	}
	if d := runLease.Spec.LeaseDurationSeconds; d != nil {
		duration = time.Duration(*d) * time.Second
	}
	return since, duration
}
