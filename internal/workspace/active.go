package workspace

import (
	"context"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/conditions"
	"captf.io/captf/internal/jobs"
	"captf.io/captf/internal/records"
)

// Limits of a Job that does not get going.
const (
	// StuckJobAge is how old a Job whose pod never started must be before
	// a missing per-run Secret makes it stuck.
	StuckJobAge = time.Minute
	// ImagePullGrace is how long a pod may fail to pull its image before
	// its Job is stopped as failed.
	ImagePullGrace = 2 * time.Minute
)

// checkActive looks at the running Job's pod: a Job whose per-run Secret
// is gone and whose pod never started is stuck: no longer active, the
// chore DeleteStuckJob deletes it so that a new one starts
// (StuckJobDeleted); a pod that cannot pull its image is reported, and
// after ImagePullGrace its Job is stopped and counts as failed.
func (p *pass) checkActive(ctx context.Context) error {
	j := p.active
	var pods corev1.PodList
	if err := p.e.APIReader.List(ctx, &pods, client.InNamespace(j.Namespace), client.MatchingLabels{batchv1.JobNameLabel: j.Name}); err != nil {
		return err
	}
	failing, started := jobs.PodsOf(pods.Items)
	if failing != nil {
		return p.imagePullFailing(ctx, j, failing)
	}
	if !jobs.Stuck(j, started, p.now, p.e.Options.stuckJobAge()) {
		return nil
	}
	err := p.e.APIReader.Get(ctx, client.ObjectKey{Namespace: j.Namespace, Name: jobs.PerRunSecretName(j.Name)}, &corev1.Secret{})
	if !apierrors.IsNotFound(err) {
		return err
	}
	// Stuck: the pass goes on as if it were gone (it never ran), and the
	// chore DeleteStuckJob deletes it before the pass acts.
	p.running.stuck, p.active, p.w.Status.ActiveJob = j, nil, nil
	return nil
}

// deleteStuckJob (the chore DeleteStuckJob) deletes, with its pod, the
// Job checkActive found stuck, once status.activeJob no longer names it,
// and releases its run lease.
func (p *pass) deleteStuckJob(ctx context.Context) error {
	j := p.running.stuck
	if err := p.forgetActiveJob(ctx); err != nil {
		return err
	}
	if err := p.e.runs().Delete(ctx, j); err != nil {
		return err
	}
	p.eventf(corev1.EventTypeWarning, "StuckJobDeleted", "Deleted Job %s: its per-run Secret is missing and its pod never started; a new Job starts", j.Name)
	return p.releaseRunLease(ctx, j.Name)
}

// sayRunning says again what the running Job's live reports say, unless
// the pass reported on their condition (its pod cannot pull its image) or
// the Job is gone: a Job stopped for its image says so until its end is
// bookkept (its pod may be gone before it fails); a refresh or drift Job,
// or a drift remediation's apply, still runs. They go with the Job
// whatever ends it (its outcome, its deletion for a fallback image, as
// stuck or by someone else).
func (p *pass) sayRunning() {
	if p.active == nil {
		return
	}
	j := p.active
	if j.Annotations[infrav1.ImagePullFailedAnnotation] == "true" && p.reported(conditions.OpType(jobs.Op(j))) == nil {
		if cur := p.current(conditions.OpType(jobs.Op(j))); cur != nil && conditions.PullFailing(*cur) {
			p.reportLive(*cur)
		}
	}
	if c, ok := conditions.DriftJobRunning(j.Name, jobs.Op(j)); ok && p.reported(c.Type) == nil {
		p.report(c)
	}
	if j.Annotations[infrav1.DriftRemediationAnnotation] == "true" && p.reported(infrav1.DriftDetectedCondition) == nil {
		p.report(conditions.DriftRemediating(j.Name))
	}
}

// imagePullFailing reports a pod whose container cs cannot pull its
// image. Once the grace is over the pass gives up on the image: it falls
// back to the next module image (the chore FallBackImage), or, with none
// left, gives the Job up (the chore StopUnpulledJob). The runner image
// (the init container's) never falls back: it is the manager's.
func (p *pass) imagePullFailing(ctx context.Context, j *batchv1.Job, cs *corev1.ContainerStatus) error {
	v := jobs.Pull(j, cs, p.now, p.e.Options.imagePullGrace())
	p.reportLive(conditions.ImagePullFailing(j.Name, jobs.Op(j), v.Runner, cs.Image, cs.State.Waiting.Reason, cs.State.Waiting.Message))
	switch {
	case v.Wait > 0:
		p.lookAgainIn(v.Wait) // the grace ends before the Job's own requeue
		return nil
	case v.Stopped:
		return nil
	case v.Next != "":
		// The image is remembered on the attempt record: without one
		// there is nothing to fall back with.
		attempt, _, err := records.Load(ctx, p.e.APIReader, p.obj.GetNamespace(), p.role.Kind(), p.obj.GetName())
		if err != nil {
			return err
		}
		if attempt != nil {
			// The pass goes on as if the Job were gone, and the chore
			// FallBackImage deletes it before the pass acts.
			p.running.fallback = &fallback{job: j, image: cs.Image, reason: cs.State.Waiting.Reason, next: v.Next}
			p.active, p.w.Status.ActiveJob = nil, nil
			return nil
		}
	}
	p.running.unpulled = &unpulled{job: j, runner: v.Runner}
	return nil
}

// fallback is a running non-apply Job whose image could not be pulled
// within the grace, and the next image it runs with.
type fallback struct {
	job                 *batchv1.Job
	image, reason, next string
}

// unpullableNow leaves the image a fallback gives up on out of the images
// the pass's decision may choose (jobs.ChooseImage), as the chore
// FallBackImage records it.
func (p *pass) unpullableNow() {
	if f, a := p.running.fallback, p.inputs.attempt; f != nil && a != nil {
		a.UnpullableImages = records.WithUnpullable(a.UnpullableImages, f.image)
	}
}

// unpulled is a running Job whose image could not be pulled within the
// grace and has no image to fall back to; runner: the runner image's.
type unpulled struct {
	job    *batchv1.Job
	runner bool
}

// fallBackImage (the chore FallBackImage) gives up on the image of the
// Job checkActive found unpullable with another image left, once
// status.activeJob no longer names it: the image joins the attempt
// record's unpullable list, the Job is deleted (not a failure) and its run
// lease released; the pass, which decided without the image, starts it
// again with the next one.
func (p *pass) fallBackImage(ctx context.Context) error {
	f := p.running.fallback
	exists, err := records.AddUnpullableImage(ctx, p.e.client(), p.e.APIReader, p.obj.GetNamespace(), p.role.Kind(), p.obj.GetName(), f.image)
	if err != nil {
		return err
	}
	if !exists {
		return fmt.Errorf("the attempt record went away before %s could be recorded as unpullable; the next pass looks at Job %s again", f.image, f.job.Name)
	}
	if err := p.forgetActiveJob(ctx); err != nil {
		return err
	}
	if err := p.e.runs().Delete(ctx, f.job); err != nil {
		return err
	}
	op := jobs.Op(f.job)
	p.eventf(corev1.EventTypeWarning, "ImagePullFallback", "Could not pull %s (%s): deleted %s Job %s; retrying %s with %s", f.image, f.reason, op, f.job.Name, op, f.next)
	return p.releaseRunLease(ctx, f.job.Name)
}

// forgetActiveJob writes status.activeJob empty before the pass deletes its
// own Job, so that a pass reading the status never takes the Job for one
// that vanished (which would make an apply unconfirmed).
func (p *pass) forgetActiveJob(ctx context.Context) error {
	if p.role.View(p.before).Status.ActiveJob == nil {
		return nil
	}
	target := p.before.DeepCopyObject().(client.Object)
	p.role.View(target).Status.ActiveJob = nil
	p.expectOwnWrite(target)
	if err := p.e.client().Status().Patch(ctx, target, client.MergeFrom(p.before)); err != nil {
		p.e.ForgetEcho(p.obj)
		return client.IgnoreNotFound(err)
	}
	p.role.View(p.before).Status.ActiveJob = nil
	return nil
}
