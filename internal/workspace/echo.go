package workspace

import (
	"crypto/sha256"
	"encoding/json"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// A pass ends with one status write, and the object's own watch sees it
// come back as an update, often before the write's response. A pass woken
// by that echo alone reads what the previous pass wrote and writes
// nothing, at the cost of a dozen live reads. So before the write the
// engine remembers, per object, the object as the pass means to leave it,
// and the kind's controller drops an update that shows exactly that
// (OwnEcho). Any other update still wakes a pass: a write that met
// another change on the way (including the generation a spec write of
// the same pass moved, which status.observedGeneration has to follow), a
// status written by another hand, a relist that folds the echo with a
// later change.

// expectStatusWrite remembers o as the pass means to leave it.
func (e *Engine) expectStatusWrite(o client.Object) {
	sum, err := servedSum(o)
	if err != nil {
		e.ForgetEcho(o)
		return
	}
	e.echoes.Store(o.GetUID(), sum)
}

// ForgetEcho forgets what the engine expects of o (o is gone, or its
// pass wrote nothing to expect).
func (e *Engine) ForgetEcho(o client.Object) { e.echoes.Delete(o.GetUID()) }

// OwnEcho reports whether an update shows o exactly as the engine's last
// status write meant to leave it: it needs no pass. Either way the
// expectation ends with the first update, so that an object changed and
// changed back is not taken for an echo.
func (e *Engine) OwnEcho(o client.Object) bool {
	want, ok := e.echoes.Load(o.GetUID())
	if !ok {
		return false
	}
	e.echoes.CompareAndDelete(o.GetUID(), want)
	sum, err := servedSum(o)
	return err == nil && sum == want.([sha256.Size]byte)
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
