package workspace

import (
	"sigs.k8s.io/controller-runtime/pkg/client"

	"captf.io/captf/internal/echo"
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
	specWritten, err := echo.WithStatusOf(p.obj, p.before, p.role.New())
	if err != nil {
		p.e.ForgetEcho(p.obj)
		return
	}
	specWritten.SetGeneration(served)
	p.e.ExpectWrites(specWritten, final)
}
