package workspace

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/conditions"
	"captf.io/captf/internal/gates"
	"captf.io/captf/internal/jobs"
	"captf.io/captf/pkg/state"
)

// LockInfoAnnotation is where the kubernetes backend records who holds
// the state lock.
const LockInfoAnnotation = "app.terraform.io/lock-info"

// lockInfo is the backend's lock record.
type lockInfo struct {
	ID        string `json:"ID"`
	Operation string `json:"Operation"`
	Who       string `json:"Who"`
	Created   string `json:"Created"`
}

// heldLock is a state lock found while no Job of the object runs.
type heldLock struct {
	id   string
	info lockInfo
	// pod is the pod the lock names as its holder ("" when the holder is
	// not one of this object's Jobs).
	pod string
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

// readLock reads the state lock Lease live: nil when nobody holds it.
func (p *pass) readLock(ctx context.Context) (*heldLock, error) {
	lease := &coordinationv1.Lease{}
	err := p.e.APIReader.Get(ctx, client.ObjectKey{Namespace: p.runNamespace(), Name: state.LockLeaseName(p.suffix())}, lease)
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
	l := &heldLock{id: holder}
	if json.Unmarshal([]byte(raw), &l.info) == nil {
		if l.info.ID != "" {
			l.id = l.info.ID
		}
		l.pod = podOfHolder(l.info.Who, p.role.Kind(), p.obj.GetName())
	}
	return l, nil
}

// checkLock runs while no Job of the object is active: a lock left by one
// of its own Jobs whose pod finished, or is gone and waited out
// (lockHolderDead), is stale and handed to the next Job to force-unlock;
// any other holder is reported as StateLocked, a live report (Jobs still
// start and wait lockTimeoutSeconds for it).
func (p *pass) checkLock(ctx context.Context) error {
	p.forceUnlock = ""
	l, err := p.readLock(ctx)
	if err != nil || l == nil {
		return err
	}
	if l.pod != "" {
		dead, err := p.lockHolderDead(ctx, l)
		if err != nil || !dead {
			return err // its holder may still run: the lock is live
		}
		p.forceUnlock = l.id
		return nil
	}
	if c := p.current(infrav1.StateReadableCondition); c != nil && c.Status == metav1.ConditionFalse && c.Reason != infrav1.StateLockedReason {
		return nil // a hold (lost, corrupt, retained, ...) says more than a lock
	}
	p.report(conditions.StateLocked(l.info.Who, l.info.Operation, l.info.Created))
	return nil
}

// checkForeignLock runs while a Job of the object is active and the state
// is not read: a StateLocked an earlier pass reported is said again while
// the other holder keeps the lock, and once it let go (the Job may hold
// it now) StateReadable says again what the state read said before it (a
// live report). A lock that cannot be read, or one seen in the object's
// namespace while the Job runs in its evacuation namespace, stays as it
// was said.
func (p *pass) checkForeignLock(ctx context.Context) error {
	c := p.current(infrav1.StateReadableCondition)
	if c == nil || c.Reason != infrav1.StateLockedReason {
		return nil
	}
	if p.evacNS != nil {
		p.report(*c)
		return nil
	}
	l, err := p.readLock(ctx)
	switch {
	case err != nil:
		ctrl.LoggerFrom(ctx).Error(err, "Reading the state lock again while a Job runs")
		p.report(*c)
	case l != nil && l.pod == "":
		p.report(conditions.StateLocked(l.info.Who, l.info.Operation, l.info.Created))
	}
	return nil
}

// lockHolderDead reads the pod a lock of one of the object's Jobs names,
// that Job and the run lease, live, and decides with gates.HolderDead.
func (p *pass) lockHolderDead(ctx context.Context, l *heldLock) (bool, error) {
	ns := p.runNamespace()
	var pods []corev1.Pod
	pod := &corev1.Pod{}
	if err := p.e.APIReader.Get(ctx, client.ObjectKey{Namespace: ns, Name: l.pod}, pod); err == nil {
		pods = append(pods, *pod)
	} else if !apierrors.IsNotFound(err) {
		return false, err
	}
	if gates.HolderRuns(nil, pods) {
		return false, nil
	}
	jobName := l.pod[:strings.LastIndex(l.pod, "-")] // podOfHolder checked the Job name and suffix
	job := &batchv1.Job{}
	if err := p.e.APIReader.Get(ctx, client.ObjectKey{Namespace: ns, Name: jobName}, job); apierrors.IsNotFound(err) {
		job = nil
	} else if err != nil {
		return false, err
	}
	lease := &coordinationv1.Lease{}
	if err := p.e.APIReader.Get(ctx, client.ObjectKey{Namespace: ns, Name: gates.RunLeaseName(p.suffix())}, lease); apierrors.IsNotFound(err) {
		lease = nil
	} else if err != nil {
		return false, err
	}
	deadline := p.eff.Policy.ActiveDeadlineSeconds
	if job != nil && job.Spec.ActiveDeadlineSeconds != nil {
		deadline = *job.Spec.ActiveDeadlineSeconds
	}
	since, duration := lockSince(l.info, lease, jobName, deadline)
	return gates.HolderDead(pods, since, p.now, p.e.gates().Options.HolderWait(job, duration)), nil
}

// lockSince is when the holder of a lock, a pod of Job jobName, was last
// known alive, and the lease duration to wait out after that: the later of
// the lock's creation and the run lease's renewal while the lease still
// names that Job (with its duration); without such a lease, the backstop
// of the Job's deadline. A zero time: nothing says, and the lock is never
// taken to be stale (the stale-lock runbook unlocks it by hand).
func lockSince(info lockInfo, runLease *coordinationv1.Lease, jobName string, deadline int64) (time.Time, time.Duration) {
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
