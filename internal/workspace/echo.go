package workspace

import (
	"crypto/sha256"
	"encoding/json"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"captf.io/captf/internal/jobs"
)

// A pass ends with one status write, and the object's own watch sees it
// come back as an update, often before the write's response. A pass woken
// by that echo alone reads what the previous pass wrote and writes
// nothing, at the cost of a dozen live reads. So before the write the
// engine remembers, per object, the object as the pass means to leave it,
// and the kind's controller drops an update that shows exactly that
// (OwnEcho). A pass that writes a contract field of the spec (a machine's
// spec.providerID) writes twice, the spec then the status: the engine
// remembers both, in order, and its status vouches for the generation its
// own spec write makes. Any other update still wakes a pass: a write that
// met another change on the way, a status written by another hand, a
// relist that folds the echo with a later change.

// expectation is what the engine expects of an object's next updates,
// each as the served object's fingerprint, in order.
type expectation struct{ sums [][sha256.Size]byte }

// expectStatusWrite remembers o as the pass means to leave it.
func (e *Engine) expectStatusWrite(o client.Object) { e.expectWrites(o) }

// expectWrites remembers, in order, the object as each of the pass's
// writes means to leave it, after what the engine expects already of the
// same pass's earlier writes (an echo may have come and gone meanwhile).
func (e *Engine) expectWrites(objs ...client.Object) {
	var sums [][sha256.Size]byte
	for _, o := range objs {
		sum, err := servedSum(o)
		if err != nil {
			e.ForgetEcho(o)
			return
		}
		sums = append(sums, sum)
	}
	uid := objs[0].GetUID()
	for {
		v, ok := e.echoes.Load(uid)
		if !ok {
			if _, loaded := e.echoes.LoadOrStore(uid, &expectation{sums: sums}); !loaded {
				return
			}
			continue
		}
		ex := v.(*expectation)
		more := &expectation{sums: append(append([][sha256.Size]byte{}, ex.sums...), sums...)}
		if e.echoes.CompareAndSwap(uid, ex, more) {
			return
		}
	}
}

// ForgetEcho forgets what the engine expects of o (o is gone, or its
// pass wrote nothing to expect).
func (e *Engine) ForgetEcho(o client.Object) { e.echoes.Delete(o.GetUID()) }

// Gone forgets what the engine keeps of a deleted object: the echo it
// expects, an owner problem it saw (owner.go), the records its live
// reports covered (livereport.Store.ForgetObject) and the wait it
// announced (events.go).
func (e *Engine) Gone(o client.Object) {
	e.ForgetEcho(o)
	e.ownerProblems.Delete(o.GetUID())
	e.live.ForgetObject(o.GetUID())
	e.waits.Delete(o.GetUID())
}

// OwnEcho reports whether an update shows o exactly as the engine's next
// expected write means to leave it: it needs no pass. An update that
// shows anything else ends every expectation, so that an object changed
// and changed back is not taken for an echo.
func (e *Engine) OwnEcho(o client.Object) bool {
	v, ok := e.echoes.Load(o.GetUID())
	if !ok {
		return false
	}
	ex := v.(*expectation)
	sum, err := servedSum(o)
	if err != nil || sum != ex.sums[0] {
		e.echoes.CompareAndDelete(o.GetUID(), ex)
		return false
	}
	if len(ex.sums) == 1 {
		e.echoes.CompareAndDelete(o.GetUID(), ex)
	} else {
		e.echoes.CompareAndSwap(o.GetUID(), ex, &expectation{sums: ex.sums[1:]})
	}
	return true
}

// servedSum fingerprints an object as the API serves it (times in
// seconds), leaving out the resourceVersion, the managed fields, and its
// apiVersion and kind (a live read and an informer may fill them in or
// not).
func servedSum(o client.Object) ([sha256.Size]byte, error) {
	c := o.DeepCopyObject().(client.Object)
	c.SetResourceVersion("")
	c.SetManagedFields(nil)
	c.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	data, err := json.Marshal(c)
	if err != nil {
		return [sha256.Size]byte{}, err
	}
	return sha256.Sum256(data), nil
}

// A pass that creates a Job, and the pass that marks a finished Job
// bookkept, know what the Job's next event shows: the Job's creation, and
// the Job with the marks. The object's Job watch drops those events
// (OwnJobCreate, OwnJobUpdate): the next pass would read what the pass
// wrote and do nothing. jobEchoes holds them, per Job namespace/name.
type jobEcho struct {
	created bool
	sum     [sha256.Size]byte
}

func jobKey(j client.Object) string { return j.GetNamespace() + "/" + j.GetName() }

// expectJobCreate remembers that the engine creates j.
func (e *Engine) expectJobCreate(j *batchv1.Job) {
	e.jobEchoes.Store(jobKey(j), &jobEcho{created: true})
}

// expectJobUpdate remembers j as a write of the engine leaves it, as a
// pass reads it (jobs.AsRead).
func (e *Engine) expectJobUpdate(j *batchv1.Job) {
	sum, err := servedSum(jobs.AsRead(j))
	if err != nil {
		e.ForgetJobEcho(j)
		return
	}
	e.jobEchoes.Store(jobKey(j), &jobEcho{sum: sum})
}

// ForgetJobEcho forgets what the engine expects of j (its write failed,
// or it is gone).
func (e *Engine) ForgetJobEcho(j client.Object) { e.jobEchoes.Delete(jobKey(j)) }

// OwnJobCreate reports whether j's creation is the engine's own.
func (e *Engine) OwnJobCreate(j client.Object) bool {
	v, ok := e.jobEchoes.Load(jobKey(j))
	if !ok || !v.(*jobEcho).created {
		return false
	}
	e.jobEchoes.CompareAndDelete(jobKey(j), v)
	return true
}

// OwnJobUpdate reports whether an update of j (one a pass reads:
// jobs.AsRead) shows it exactly as the engine's own write left it. The
// first such update ends the expectation, matched or not.
func (e *Engine) OwnJobUpdate(j *batchv1.Job) bool {
	v, ok := e.jobEchoes.Load(jobKey(j))
	if !ok || v.(*jobEcho).created {
		return false
	}
	e.jobEchoes.CompareAndDelete(jobKey(j), v)
	sum, err := servedSum(jobs.AsRead(j))
	return err == nil && sum == v.(*jobEcho).sum
}
