package echo

import (
	"crypto/sha256"
	"encoding/json"
	"sync"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"captf.io/captf/internal/jobs"
)

// Filter holds what the engine expects of the next watch events of the
// objects and Jobs it writes. Its zero value expects nothing; it is safe
// for concurrent use and must not be copied.
type Filter struct {
	// objects holds, per object UID, the fingerprints of the object as
	// each of its pass's writes means to leave it, in order.
	objects sync.Map
	// jobs holds, per Job namespace/name, what its next event shows.
	jobs sync.Map
}

// expectation is what the engine expects of an object's next updates,
// each as the served object's fingerprint, in order.
type expectation struct{ sums [][sha256.Size]byte }

// ExpectWrites remembers, in order, the object as each of a pass's writes
// means to leave it, after what is expected already of the same pass's
// earlier writes (an echo may have come and gone meanwhile).
func (f *Filter) ExpectWrites(objs ...client.Object) {
	var sums [][sha256.Size]byte
	for _, o := range objs {
		sum, err := servedSum(o)
		if err != nil {
			f.ForgetEcho(o)
			return
		}
		sums = append(sums, sum)
	}
	uid := objs[0].GetUID()
	for {
		v, ok := f.objects.Load(uid)
		if !ok {
			if _, loaded := f.objects.LoadOrStore(uid, &expectation{sums: sums}); !loaded {
				return
			}
			continue
		}
		ex := v.(*expectation)
		more := &expectation{sums: append(append([][sha256.Size]byte{}, ex.sums...), sums...)}
		if f.objects.CompareAndSwap(uid, ex, more) {
			return
		}
	}
}

// ForgetEcho forgets what is expected of o (o is gone, or its pass wrote
// nothing to expect).
func (f *Filter) ForgetEcho(o client.Object) { f.objects.Delete(o.GetUID()) }

// OwnEcho reports whether an update shows o exactly as the next expected
// write means to leave it: it needs no pass. An update that shows
// anything else ends every expectation, so that an object changed and
// changed back is not taken for an echo.
func (f *Filter) OwnEcho(o client.Object) bool {
	v, ok := f.objects.Load(o.GetUID())
	if !ok {
		return false
	}
	ex := v.(*expectation)
	sum, err := servedSum(o)
	if err != nil || sum != ex.sums[0] {
		f.objects.CompareAndDelete(o.GetUID(), ex)
		return false
	}
	if len(ex.sums) == 1 {
		f.objects.CompareAndDelete(o.GetUID(), ex)
	} else {
		f.objects.CompareAndSwap(o.GetUID(), ex, &expectation{sums: ex.sums[1:]})
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

// jobEcho is what a Job's next event shows: its creation, or the Job as
// a write left it.
type jobEcho struct {
	created bool
	sum     [sha256.Size]byte
}

func jobKey(j client.Object) string { return j.GetNamespace() + "/" + j.GetName() }

// ExpectJobCreate remembers that the engine creates j.
func (f *Filter) ExpectJobCreate(j *batchv1.Job) {
	f.jobs.Store(jobKey(j), &jobEcho{created: true})
}

// ExpectJobUpdate remembers j as a write of the engine leaves it, as a
// pass reads it (jobs.AsRead).
func (f *Filter) ExpectJobUpdate(j *batchv1.Job) {
	sum, err := servedSum(jobs.AsRead(j))
	if err != nil {
		f.ForgetJobEcho(j)
		return
	}
	f.jobs.Store(jobKey(j), &jobEcho{sum: sum})
}

// ForgetJobEcho forgets what is expected of j (its write failed, or it
// is gone).
func (f *Filter) ForgetJobEcho(j client.Object) { f.jobs.Delete(jobKey(j)) }

// OwnJobCreate reports whether j's creation is the engine's own.
func (f *Filter) OwnJobCreate(j client.Object) bool {
	v, ok := f.jobs.Load(jobKey(j))
	if !ok || !v.(*jobEcho).created {
		return false
	}
	f.jobs.CompareAndDelete(jobKey(j), v)
	return true
}

// OwnJobUpdate reports whether an update of j (one a pass reads:
// jobs.AsRead) shows it exactly as the engine's own write left it. The
// first such update ends the expectation, matched or not.
func (f *Filter) OwnJobUpdate(j *batchv1.Job) bool {
	v, ok := f.jobs.Load(jobKey(j))
	if !ok || v.(*jobEcho).created {
		return false
	}
	f.jobs.CompareAndDelete(jobKey(j), v)
	sum, err := servedSum(jobs.AsRead(j))
	return err == nil && sum == v.(*jobEcho).sum
}
