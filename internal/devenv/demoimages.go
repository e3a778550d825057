package devenv

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"captf.io/captf/pkg/contract"
)

// imageFields are where each kind of the examples names its module image,
// and the role the image plays.
var imageFields = map[string]struct {
	role contract.Role
	path []string
}{
	"TerraformCluster":         {contract.RoleCluster, []string{"spec", "source", "image"}},
	"TerraformMachine":         {contract.RoleMachine, []string{"spec", "source", "image"}},
	"TerraformMachinePool":     {contract.RoleMachinePool, []string{"spec", "source", "image"}},
	"TerraformMachineTemplate": {contract.RoleMachine, []string{"spec", "template", "spec", "source", "image"}},
}

// useDemoImages makes the example objects run the modules a user gave the
// demo (Env.DemoImages) instead of the example modules, role by role.
func (e *Env) useDemoImages(objs []*unstructured.Unstructured) error {
	for _, o := range objs {
		f, ok := imageFields[o.GetKind()]
		if !ok {
			continue
		}
		ref, ok := e.DemoImages[f.role]
		if !ok {
			continue
		}
		if err := unstructured.SetNestedField(o.Object, ref, f.path...); err != nil {
			return fmt.Errorf("%s %s: %w", o.GetKind(), o.GetName(), err)
		}
	}
	return nil
}
