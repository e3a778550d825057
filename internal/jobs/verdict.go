package jobs

import (
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/utils/ptr"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/conditions"
	"captf.io/captf/internal/decide"
	"captf.io/captf/internal/runner/result"
)

// Verdict is what bookkeeping makes of a finished Job's outcome, before
// any write: how the run failed, and the marks the Job takes.
type Verdict struct {
	// Kind is how the run failed ("" when it did not, or the result does
	// not say): the result's error kind, or Interrupted for a Job that
	// left no result and no pod (stopped from outside: its pod deleted,
	// its node lost; a pod that ended without a result, killed for its
	// memory say, is a failure and backs off).
	Kind infrav1.RunErrorKind
	// Marks are the annotations the Job takes: blocked before a
	// destructive plan, stopped by a changed plan, interrupted (not by its
	// deadline), the serial of the state the runner rescued, a plan Job
	// whose plan is unreadable.
	Marks map[string]string
	// Rescued is the serial of the state the runner rescued ("" when
	// none), which the attempt record keeps too.
	Rescued string
	// NewSample: a succeeded apply, refresh or drift Job, so the state's
	// health output is a new reading.
	NewSample bool
}

// Verdict is o's verdict.
func (o Outcome) Verdict() Verdict {
	v := Verdict{Marks: map[string]string{}}
	if o.Result != nil && o.Result.Error != nil {
		v.Kind = o.Result.Error.Kind
	}
	switch v.Kind {
	case infrav1.RunErrorBlocked:
		v.Marks[infrav1.DestructivePlanBlockedAnnotation] = "true"
	case infrav1.RunErrorPlanChanged:
		v.Marks[infrav1.PlanChangedAnnotation] = "true"
	case infrav1.RunErrorInterrupted:
		if !o.Deadline {
			v.Marks[infrav1.InterruptedAnnotation] = "true"
		}
	}
	if o.Result != nil && o.Result.Rescue != nil {
		v.Rescued = fmt.Sprint(o.Result.Rescue.Serial)
		v.Marks[infrav1.RescuedSerialAnnotation] = v.Rescued
	}
	if o.Op == decide.OpPlan && o.Succeeded && o.PlanUnreadable() {
		v.Marks[infrav1.PlanUnreadableAnnotation] = "true"
	}
	if o.Result == nil && !o.Succeeded && !o.Deadline && !o.PodFound {
		v.Marks[infrav1.InterruptedAnnotation] = "true"
		v.Kind = infrav1.RunErrorInterrupted
	}
	v.NewSample = o.Succeeded && (o.Op == decide.OpApply || o.Op == decide.OpRefresh || o.Op == decide.OpDrift)
	return v
}

// NeverStarted: the Job was stopped because its module image could not be
// pulled, so its runner never ran (its pod may be gone since).
func (o Outcome) NeverStarted() bool {
	return o.Job.Annotations[infrav1.ImagePullFailedAnnotation] == "true"
}

// Unconfirmed: a failed apply that left no result although its runner
// started, or whose pod is gone: whether it changed anything is unknown.
func (o Outcome) Unconfirmed() bool {
	return o.Op == decide.OpApply && !o.Succeeded && o.Result == nil && !o.NeverStarted() && (!o.Started.IsZero() || !o.PodFound)
}

// MayHaveApplied: a failed apply whose apply step may have run: the
// result lists it, or there is no result at all.
func (o Outcome) MayHaveApplied() bool {
	if o.Result == nil {
		return !o.NeverStarted()
	}
	for _, s := range o.Result.Steps {
		if s.Name == result.StepApply {
			return true
		}
	}
	return false
}

// Evidence is what bookkeeping records of what a failed apply may have
// done, on the attempt record.
type Evidence struct {
	// Unconfirmed: its outcome is unknown (Unconfirmed); Possibly: its
	// apply step may have run (MayHaveApplied) and its plan was not what
	// stopped it. Both may hold: each is recorded, in that order.
	Unconfirmed, Possibly bool
	// Newer are the applies of all that finished after it: the records
	// keep what they say.
	Newer []string
}

// Evidence is what o, of verdict kind, leaves on the attempt record among
// all, the object's Jobs: nothing once a successful apply finished after
// it (its outcome, read late, is settled).
func (o Outcome) Evidence(all []batchv1.Job, kind infrav1.RunErrorKind) Evidence {
	if o.Op != decide.OpApply || o.Succeeded || len(AppliesAfter(all, o.Job, true)) > 0 {
		return Evidence{}
	}
	e := Evidence{Unconfirmed: o.Unconfirmed(),
		Possibly: kind != infrav1.RunErrorBlocked && kind != infrav1.RunErrorPlanChanged && o.MayHaveApplied()}
	if e.Unconfirmed || e.Possibly {
		e.Newer = AppliesAfter(all, o.Job, false)
	}
	return e
}

// MetricLabels are how the metrics name the end of o's Job, whose failure
// kind is kind (Verdict): the result label of captf_jobs_total and, for a
// failure, the error kind and the failed step of captf_job_errors_total.
func (o Outcome) MetricLabels(kind infrav1.RunErrorKind) (res, errorKind, step string) {
	switch {
	case o.Succeeded:
		return "succeeded", "", ""
	case o.Deadline:
		res, errorKind = "deadline", "deadline"
	case kind == infrav1.RunErrorInterrupted:
		res = "interrupted"
	case kind == infrav1.RunErrorBlocked:
		res = "blocked"
	case kind == infrav1.RunErrorPlanChanged:
		res = "plan_changed"
	default:
		res = "failed"
	}
	if errorKind == "" {
		errorKind = string(kind)
	}
	if errorKind == "" {
		errorKind = "unknown"
	}
	if o.Result != nil && o.Result.Error != nil {
		step = o.Result.Error.Step
	}
	return res, errorKind, step
}

// keptMarks are the annotations bookkeeping gives a Job it recorded, when
// its verdict (or its plan) set them: later passes read them of the Job
// (Summary).
var keptMarks = []string{infrav1.InterruptedAnnotation, infrav1.DestructivePlanBlockedAnnotation, infrav1.PlanChangedAnnotation,
	infrav1.RescuedSerialAnnotation, infrav1.PlanHashAnnotation, infrav1.PlanUnreadableAnnotation}

// BookkeptMarks are the annotations the bookkept mark writes on j: the
// mark itself, and those of keptMarks j carries.
func BookkeptMarks(j *batchv1.Job) map[string]string {
	ann := map[string]string{infrav1.BookkeptAnnotation: "true"}
	for _, k := range keptMarks {
		if v, ok := j.Annotations[k]; ok {
			ann[k] = v
		}
	}
	return ann
}

// Marked is all as the bookkept marks on bookkept leave them.
func Marked(all []batchv1.Job, bookkept []*batchv1.Job) []batchv1.Job {
	marked := make([]batchv1.Job, len(all))
	for i := range all {
		marked[i] = all[i]
		for _, b := range bookkept {
			if b.Namespace == all[i].Namespace && b.Name == all[i].Name {
				marked[i] = *WithAnnotations(&all[i], map[string]string{infrav1.BookkeptAnnotation: "true"})
			}
		}
	}
	return marked
}

// WithAnnotations is a copy of j with ann set.
func WithAnnotations(j *batchv1.Job, ann map[string]string) *batchv1.Job {
	c := j.DeepCopy()
	if c.Annotations == nil {
		c.Annotations = map[string]string{}
	}
	for k, v := range ann {
		c.Annotations[k] = v
	}
	return c
}

// Facts are what the report of o's Job, whose failure kind is kind
// (Verdict), is computed from (conditions.Job).
func (o Outcome) Facts(kind infrav1.RunErrorKind) conditions.JobFacts {
	j := o.Job
	return conditions.JobFacts{Name: j.Name, Op: o.Op, Succeeded: o.Succeeded, Deadline: o.Deadline, DeadlineSeconds: ptr.Deref(j.Spec.ActiveDeadlineSeconds, 0),
		ImagePullFailed: j.Annotations[infrav1.ImagePullFailedAnnotation] == "true", Image: ReportedImage(j),
		RunnerImage:    j.Annotations[infrav1.RunnerImagePullFailedAnnotation] == "true",
		PlanUnreadable: o.Op == decide.OpPlan && o.PlanUnreadable(), Kind: kind, Summary: o.Tail()}
}
