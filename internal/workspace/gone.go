package workspace

import (
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Gone forgets what the engine keeps of a deleted object: the echo it
// expects (internal/echo), an owner problem it saw (owner.go), the records
// its live reports covered (livereport.Store.ForgetObject) and the wait it
// announced (events.go).
func (e *Engine) Gone(o client.Object) {
	e.ForgetEcho(o)
	e.ownerProblems.Delete(o.GetUID())
	e.live.ForgetObject(o.GetUID())
	e.waits.Delete(o.GetUID())
}
