package runner

import (
	"fmt"

	"captf.io/captf/internal/plan"
)

// savedPlan plans to the plan file and, when there are changes, reads the
// plan with show -json into memory. It reports the parsed plan (nil when
// the plan has no changes at all) and whether the run goes on.
func (r *run) savedPlan(extra ...string) (*plan.Plan, bool) {
	args := append([]string{"-detailed-exitcode"}, extra...)
	args = append(args, "-var-file="+TfvarsFile, "-out="+r.planFile())
	c := r.locking(StepPlan, "plan", args...)
	c.accepted = []int{2}
	out, ok := r.exec(c)
	if !ok || out.exit == 0 {
		return nil, ok
	}
	shown, ok := r.exec(command{name: StepShowJSON, args: []string{"show", "-json", "-no-color", r.planFile()}, stdout: captured})
	if !ok {
		return nil, false
	}
	p, err := plan.Parse(shown.stdout)
	if err != nil {
		r.result.Error = &RunError{Kind: KindStep, Step: StepShowJSON, Tail: "the plan cannot be read: " + err.Error()}
		return nil, false
	}
	return p, true
}

// planSummary is the plan's summary with its keyed fingerprint; an empty
// plan (nil) has the empty plan's hash.
func (r *run) planSummary(p *plan.Plan) (*PlanSummary, error) {
	if p == nil {
		return &PlanSummary{Hash: plan.EmptyPlanHash}, nil
	}
	hash, err := p.Fingerprint(r.p.planKey)
	if err != nil {
		return nil, err
	}
	return &PlanSummary{Hash: hash, Summary: p.Summary()}, nil
}

// previewPlan is the Manual policy's plan Job: it plans, and reports the
// summary and fingerprint. Nothing is applied.
func (r *run) previewPlan() {
	if !r.step(r.validate()) {
		return
	}
	p, ok := r.savedPlan()
	if !ok {
		return
	}
	r.reportPlan(p)
}

func (r *run) reportPlan(p *plan.Plan) bool {
	s, err := r.planSummary(p)
	if err != nil {
		r.result.Error = &RunError{Kind: KindStep, Step: StepShowJSON, Tail: err.Error()}
		return false
	}
	r.result.Plan = s
	r.ev.post(false, EventPlanSummary, StepPlan, fmt.Sprintf("plan: %s", counts(s)))
	return true
}

// guardedApply plans first and applies the saved plan only when it passes
// the checks: with --expect-plan, the fresh plan must fingerprint to the
// approved hash; with --guard-deletes, a plan that deletes or replaces
// needs --allow-deletes-hash equal to --inputs-hash. A plan without any
// change skips the apply. Stopping changes nothing.
func (r *run) guardedApply() {
	if !r.step(r.validate()) {
		return
	}
	p, ok := r.savedPlan()
	if !ok {
		return
	}
	switch {
	case r.o.ExpectPlan != "":
		if !r.reportPlan(p) {
			return
		}
		if r.result.Plan.Hash != r.o.ExpectPlan {
			r.result.Error = &RunError{Kind: KindPlanChanged, Tail: fmt.Sprintf(
				"the plan changed since it was approved: it now plans %s; nothing was applied", counts(r.result.Plan))}
			return
		}
		r.result.Plan = nil
	case p == nil:
	case p.Destructive() && (r.o.AllowDeletesHash == "" || r.o.AllowDeletesHash != r.o.InputsHash):
		if !r.reportPlan(p) {
			return
		}
		r.result.Error = &RunError{Kind: KindBlocked, Tail: fmt.Sprintf(
			"the plan deletes or replaces resources (%s) and is not approved; nothing was applied", counts(r.result.Plan))}
		return
	}
	if p == nil {
		return // no changes at all: nothing to apply
	}
	r.step(r.locking(StepApply, "apply", r.planFile()))
}

// drift refreshes the state, then plans without refreshing again: any
// resource change is drift.
func (r *run) drift() {
	if !r.step(r.refreshOnly()) {
		return
	}
	p, ok := r.savedPlan("-refresh=false")
	if !ok {
		return
	}
	d := &Drift{}
	if p != nil {
		d = &Drift{Drift: p.Drift()}
	}
	r.result.Drift = d
	r.ev.post(false, EventPlanSummary, StepPlan, fmt.Sprintf("drift: %d to create, %d to update, %d to replace, %d to delete", d.Create, d.Update, d.Replace, d.Delete))
}

func counts(s *PlanSummary) string {
	return fmt.Sprintf("%d to create, %d to update, %d to replace, %d to delete", s.Create, s.Update, s.Replace, s.Delete)
}
