package writecheck

import (
	"context"
	"errors"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

var errRefused = errors.New("refused by the check")

// callEach calls every method of the interface iface on v, with ctx and
// arguments no write would accept, and returns each one's error.
func callEach(t *testing.T, v any, iface reflect.Type, ctx context.Context) map[string]error {
	t.Helper()
	out := map[string]error{}
	for i := range iface.NumMethod() {
		m := iface.Method(i)
		fn := reflect.ValueOf(v).MethodByName(m.Name)
		var args []reflect.Value
		for j := range fn.Type().NumIn() {
			in := fn.Type().In(j)
			switch {
			case j == 0:
				args = append(args, reflect.ValueOf(ctx))
			case fn.Type().IsVariadic() && j == fn.Type().NumIn()-1:
			case in == reflect.TypeFor[client.Object]():
				args = append(args, reflect.ValueOf(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cm"}}))
			case in == reflect.TypeFor[client.Patch]():
				args = append(args, reflect.ValueOf(client.Merge))
			default:
				args = append(args, reflect.Zero(in))
			}
		}
		func() {
			defer func() {
				if r := recover(); r != nil {
					out[m.Name] = errors.New("panicked: the write reached the client")
				}
			}()
			res := fn.Call(args)
			err, _ := res[len(res)-1].Interface().(error)
			out[m.Name] = err
		}()
	}
	return out
}

// TestEveryWriteRunsTheCheck: every write method of the client, of its
// status writer and of its subresource clients, run with an armed
// context, fails with the check's error and writes nothing; reads, and
// writes without an armed context, go through.
func TestEveryWriteRunsTheCheck(t *testing.T) {
	c := Client(fake.NewClientBuilder().Build())
	armed := Arm(t.Context(), func(context.Context) error { return errRefused })
	for what, writer := range map[string]struct {
		v     any
		iface reflect.Type
	}{
		"client":        {c, reflect.TypeFor[client.Writer]()},
		"status writer": {c.Status(), reflect.TypeFor[client.SubResourceWriter]()},
		"subresource":   {c.SubResource("scale"), reflect.TypeFor[client.SubResourceWriter]()},
	} {
		for method, err := range callEach(t, writer.v, writer.iface, armed) {
			if !errors.Is(err, errRefused) {
				t.Errorf("%s %s with an armed context = %v, want the check's error", what, method, err)
			}
		}
	}
	if err := c.Get(armed, client.ObjectKey{Namespace: "ns", Name: "cm"}, &corev1.ConfigMap{}); errors.Is(err, errRefused) {
		t.Error("a read ran the check")
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cm"}}
	if err := c.Create(t.Context(), cm); err != nil {
		t.Fatalf("a write without an armed context: %v", err)
	}
	ran := 0
	once := Arm(t.Context(), func(context.Context) error { ran++; return nil })
	if err := c.Update(once, cm); err != nil || ran != 1 {
		t.Errorf("a write whose check passes = %v after %d checks, want it written after 1", err, ran)
	}
}
