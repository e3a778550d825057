package echo

import (
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Moved reports whether a pass changed an object's metadata, and its spec
// (which moves its generation), between before (as read) and after (as
// the pass leaves it); both true when unsure.
func Moved(before, after client.Object) (metadata, spec bool) {
	b, err := runtime.DefaultUnstructuredConverter.ToUnstructured(before)
	if err != nil {
		return true, true
	}
	a, err := runtime.DefaultUnstructuredConverter.ToUnstructured(after)
	if err != nil {
		return true, true
	}
	return !equality.Semantic.DeepEqual(b["metadata"], a["metadata"]), !equality.Semantic.DeepEqual(b["spec"], a["spec"])
}

// WithStatusOf is obj with the status of from, made in into (a new object
// of obj's kind): what the API server serves after a write of obj's
// metadata and spec, before its status write.
func WithStatusOf(obj, from, into client.Object) (client.Object, error) {
	o, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	src, err := runtime.DefaultUnstructuredConverter.ToUnstructured(from)
	if err != nil {
		return nil, err
	}
	delete(o, "status")
	if status, ok := src["status"]; ok {
		o["status"] = status
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o, into); err != nil {
		return nil, err
	}
	return into, nil
}
