package workspace

import (
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The object as each of a pass's own writes of it leaves it, for the
// echoes the engine expects (internal/echo): a write before the status (the
// block-move annotation, status.activeJob forgotten), the metadata and
// spec written with the status (contract fields, the block-move
// annotation lifted), then the status.

// expectOwnWrite remembers stored, the object as a write of the pass
// before its status write leaves it (unless the pass wrote the object
// untracked already: its finalizer).
func (p *pass) expectOwnWrite(stored client.Object) {
	if p.obj.GetResourceVersion() == p.read {
		p.e.ExpectWrites(stored.DeepCopyObject().(client.Object))
	}
}

// expectOwnWrites remembers the object as the pass's writes mean to leave
// it, at the generation the object will be served with: after its spec
// write (when it writes one), the spec and metadata the pass set over the
// status it read; after its status write, all of it.
func (p *pass) expectOwnWrites(served int64, writeMain bool) {
	final := p.obj.DeepCopyObject().(client.Object)
	final.SetGeneration(served)
	if !writeMain {
		p.e.ExpectWrites(final)
		return
	}
	specWritten, err := p.withStatusOf(p.before)
	if err != nil {
		p.e.ForgetEcho(p.obj)
		return
	}
	specWritten.SetGeneration(served)
	p.e.ExpectWrites(specWritten, final)
}

// moved reports whether the pass changed the object's metadata, and its
// spec (which moves its generation), between the object as read and as
// the pass leaves it; both true when unsure.
func (p *pass) moved() (metadata, spec bool) {
	before, err := runtime.DefaultUnstructuredConverter.ToUnstructured(p.before)
	if err != nil {
		return true, true
	}
	after, err := runtime.DefaultUnstructuredConverter.ToUnstructured(p.obj)
	if err != nil {
		return true, true
	}
	return !equality.Semantic.DeepEqual(before["metadata"], after["metadata"]), !equality.Semantic.DeepEqual(before["spec"], after["spec"])
}

// withStatusOf is a copy of the object as the pass leaves it, with the
// status of from.
func (p *pass) withStatusOf(from client.Object) (client.Object, error) {
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(p.obj)
	if err != nil {
		return nil, err
	}
	src, err := runtime.DefaultUnstructuredConverter.ToUnstructured(from)
	if err != nil {
		return nil, err
	}
	delete(obj, "status")
	if status, ok := src["status"]; ok {
		obj["status"] = status
	}
	out := p.role.New()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj, out); err != nil {
		return nil, err
	}
	return out, nil
}
