package lifecycle_test

import (
	"encoding/json"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
)

// statusChecker watches the workload objects of a namespace and checks
// the shape of every status version the manager writes: Ready present,
// observedGeneration consistent, and no secret value anywhere in it.
type statusChecker struct {
	mu       sync.Mutex
	problems []string
	versions int
}

func (w *world) checkStatuses() *statusChecker {
	w.t.Helper()
	c, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		w.t.Fatal(err)
	}
	sc := &statusChecker{}
	for _, list := range []client.ObjectList{&infrav1.TerraformClusterList{}, &infrav1.TerraformMachineList{}, &infrav1.TerraformMachinePoolList{}} {
		wt, err := c.Watch(w.t.Context(), list, client.InNamespace(w.ns))
		if err != nil {
			w.t.Fatal(err)
		}
		go func() {
			for ev := range wt.ResultChan() {
				if ev.Type == watch.Added || ev.Type == watch.Modified {
					if obj, ok := ev.Object.(client.Object); ok {
						sc.check(obj)
					}
				}
			}
		}()
		w.t.Cleanup(wt.Stop)
	}
	w.t.Cleanup(func() {
		sc.mu.Lock()
		defer sc.mu.Unlock()
		for _, p := range sc.problems {
			w.t.Error(p)
		}
	})
	return sc
}

func (sc *statusChecker) check(obj client.Object) {
	conds := conditions(obj)
	if len(conds) == 0 {
		return // not reconciled yet
	}
	var gen int64
	var status any
	switch o := obj.(type) {
	case *infrav1.TerraformCluster:
		gen, status = o.Status.ObservedGeneration, o.Status
	case *infrav1.TerraformMachine:
		gen, status = o.Status.ObservedGeneration, o.Status
	case *infrav1.TerraformMachinePool:
		gen, status = o.Status.ObservedGeneration, o.Status
	}
	var problems []string
	name := fmt.Sprintf("%T %s (resourceVersion %s)", obj, obj.GetName(), obj.GetResourceVersion())
	if meta.FindStatusCondition(conds, infrav1.ReadyCondition) == nil {
		problems = append(problems, name+": conditions without Ready")
	}
	if gen < 1 || gen > obj.GetGeneration() {
		problems = append(problems, fmt.Sprintf("%s: status.observedGeneration %d, generation %d", name, gen, obj.GetGeneration()))
	}
	for _, c := range conds {
		if c.ObservedGeneration != gen {
			problems = append(problems, fmt.Sprintf("%s: condition %s observedGeneration %d, status %d", name, c.Type, c.ObservedGeneration, gen))
		}
	}
	raw, _ := json.Marshal(status)
	if l := leaks(string(raw)); len(l) > 0 {
		problems = append(problems, fmt.Sprintf("%s: the status holds secret values %q", name, l))
	}
	sc.mu.Lock()
	defer sc.mu.Unlock()
	sc.versions++
	sc.problems = append(sc.problems, problems...)
}
