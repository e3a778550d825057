package decide

import "time"

// check is one periodic check: due at due.
type check struct {
	op     Operation
	reason Reason
	due    time.Time
}

// schedule picks the first due periodic check; when none is due, it waits
// until the soonest one.
//
// A due check backing off waits alone: the checks after it still run (one
// operation's backoff never pauses another's).
func (s Snapshot) schedule() Decision {
	checks := s.checks()
	var soonest time.Time
	var backingOff *Decision
	for _, c := range checks {
		if !s.Now.Before(c.due) {
			d := s.withBackoff(c.op, start(c.op, c.reason))
			if d.Action == ActionStartJob {
				return d
			}
			if backingOff == nil || d.Requeue < backingOff.Requeue {
				backingOff = &d
			}
			continue
		}
		if soonest.IsZero() || c.due.Before(soonest) {
			soonest = c.due
		}
	}
	switch {
	case backingOff != nil && (soonest.IsZero() || backingOff.Requeue <= soonest.Sub(s.Now)):
		return *backingOff
	case soonest.IsZero():
		return wait(ReasonUpToDate, 0)
	}
	return wait(ReasonUpToDate, soonest.Sub(s.Now))
}

// checks lists the periodic checks in table order. Converging membership
// replaces the pending-health doubling.
func (s Snapshot) checks() []check {
	sch := s.Schedule
	var out []check
	if sch.RefreshAfterApplyDue {
		out = append(out, check{OpRefresh, ReasonRefreshAfterApply, s.Now})
	}
	refreshBase := firstSet(sch.LastRefresh, sch.LastSuccessfulApply, sch.CreatedAt)
	switch {
	case sch.MembershipConverging:
		out = append(out, check{OpRefresh, ReasonMembershipConverging, refreshBase.Add(MembershipConvergingEvery)})
	case sch.HealthPending > 0:
		delay := min(HealthPendingBase<<min(sch.HealthPending-1, 10), HealthPendingMax)
		out = append(out, check{OpRefresh, ReasonHealthPending, refreshBase.Add(delay)})
	}
	if sch.MembershipInterval > 0 {
		out = append(out, check{OpRefresh, ReasonMembershipRefreshDue, refreshBase.Add(sch.MembershipInterval + Jitter(sch.UID, sch.MembershipInterval))})
	}
	if sch.HealthCheckInterval > 0 {
		out = append(out, check{OpRefresh, ReasonHealthCheckDue, refreshBase.Add(sch.HealthCheckInterval + Jitter(sch.UID, sch.HealthCheckInterval))})
	}
	if sch.DriftInterval > 0 {
		base := firstSet(sch.LastDriftCheck, sch.LastSuccessfulApply, sch.CreatedAt)
		out = append(out, check{OpDrift, ReasonDriftDue, base.Add(sch.DriftInterval + Jitter(sch.UID, sch.DriftInterval))})
	}
	return out
}

func firstSet(ts ...time.Time) time.Time {
	for _, t := range ts {
		if !t.IsZero() {
			return t
		}
	}
	return time.Time{}
}
