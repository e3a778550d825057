package workspace

import (
	"context"
	"strconv"

	"k8s.io/apimachinery/pkg/api/meta"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/conditions"
	"captf.io/captf/internal/custody"
	"captf.io/captf/internal/jobs"
	"captf.io/captf/internal/metrics"
)

// restoreRoot and restoreTfvars are a restore's inputs: the backend alone.
var (
	restoreRoot   = []byte(`{"terraform":{"backend":{"kubernetes":{}}}}` + "\n")
	restoreTfvars = []byte("{}\n")
)

// restoreRequest reads captf.io/restore-state (custody.AskRestore): the
// complete backup to restore, or nothing. A request for a serial without a
// complete backup is reported and starts nothing; a serial already
// consumed (restored or failed) is never tried again.
func (p *pass) restoreRequest(ctx context.Context) error {
	p.stored.restore = nil
	var reported string
	if c := meta.FindStatusCondition(p.w.Status.Conditions, infrav1.RestoreJobSucceededCondition); c != nil {
		reported = c.Reason
	}
	value, requested := p.obj.GetAnnotations()[infrav1.RestoreStateAnnotation]
	ask := custody.AskRestore(value, requested, p.w.Status.LastRestoredSerial, reported)
	if ask.Serial > 0 {
		sets, err := p.readBackups(ctx)
		if err != nil {
			return err
		}
		p.stored.restore, ask = ask.Pick(sets)
	}
	if ask.Rearm {
		p.w.Status.LastRestoredSerial = 0
	}
	if ask.NotFound != "" {
		p.set(conditions.RestoreBackupNotFound(ask.NotFound))
	}
	if ask.DropNotFound {
		p.dropped = append(p.dropped, infrav1.RestoreJobSucceededCondition)
	}
	return nil
}

// finishRestore is the bookkeeping of a restore Job: its serial is
// consumed either way; a success removes the request and adopts the state
// with the backup's inputs hash (none when the backup had none).
func (p *pass) finishRestore(o jobs.Outcome) {
	serial, _ := strconv.ParseInt(o.Job.Annotations[infrav1.RestoreStateAnnotation], 10, 64)
	if serial > 0 {
		p.w.Status.LastRestoredSerial = serial
	}
	// Counted once the status patch that reports it succeeded (a void
	// pass bookkeeps the restore again).
	kind := p.role.Kind()
	if !o.Succeeded {
		p.observe(func() { metrics.ObserveStateRestore(kind, "failed") })
		p.eventf("Warning", "StateRestoreFailed", "Job %s could not restore state serial %d; it is not retried for this serial (see the state-restore runbook)", o.Job.Name, serial)
		return
	}
	if ann := p.obj.GetAnnotations(); ann[infrav1.RestoreStateAnnotation] == strconv.FormatInt(serial, 10) {
		delete(ann, infrav1.RestoreStateAnnotation)
		p.obj.SetAnnotations(ann)
		p.specChanged = true
	}
	p.observe(func() { metrics.ObserveStateRestore(kind, "succeeded") })
	p.eventf("Normal", "StateRestored", "Job %s restored state serial %d", o.Job.Name, serial)
}
