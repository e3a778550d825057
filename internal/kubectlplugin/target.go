package kubectlplugin

import (
	"fmt"
	"strings"
)

// kinds maps every accepted spelling of a workload kind to the Kind.
var kinds = map[string]string{}

func init() {
	for kind, aliases := range map[string][]string{
		"TerraformCluster":     {"tfc", "terraformcluster", "terraformclusters"},
		"TerraformMachine":     {"tfm", "terraformmachine", "terraformmachines"},
		"TerraformMachinePool": {"tfmp", "terraformmachinepool", "terraformmachinepools"},
	} {
		kinds[strings.ToLower(kind)] = kind
		for _, a := range aliases {
			kinds[a] = kind
			kinds[a+".infrastructure.cluster.x-k8s.io"] = kind
		}
	}
}

// target is a workload object named on the command line as <kind>/<name>.
type target struct {
	Kind, Name string
}

func parseTarget(arg string) (target, error) {
	kind, name, ok := strings.Cut(arg, "/")
	if !ok || name == "" || strings.Contains(name, "/") {
		return target{}, fmt.Errorf("%q is not <kind>/<name>: write for example tfm/my-machine", arg)
	}
	k, ok := kinds[strings.ToLower(kind)]
	if !ok {
		return target{}, fmt.Errorf("kind %q is not a CAPTF workload kind: use tfc, tfm or tfmp (TerraformCluster, TerraformMachine, TerraformMachinePool)", kind)
	}
	return target{Kind: k, Name: name}, nil
}
