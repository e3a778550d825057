package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/localnode"
)

// quickstartOn runs the quickstart with every object on one runtime: each
// object is provisioned by an apply Job of that runtime with the Cluster API
// contract fields set and taken by Cluster API, its state written by that
// runtime; deleting the Cluster destroys each with that runtime and leaves
// nothing of CAPTF's behind.
func quickstartOn(rt string) func(t *testing.T, ctx context.Context, f *flow) {
	return func(t *testing.T, ctx context.Context, f *flow) {
		objs := f.quickstart(rt)
		f.create(ctx, objs)
		version := f.runtimeVersion(rt)

		var tc infrav1.TerraformCluster
		f.waitFor(ctx, "the TerraformCluster is provisioned with an endpoint and failure domains", jobWait, func(ctx context.Context) (bool, string, error) {
			if _, err := f.get(ctx, "quickstart", &tc); err != nil {
				return false, "", err
			}
			ok := provisionedReady(tc.Status.WorkspaceStatus) && tc.Spec.ControlPlaneEndpoint.Host != "" &&
				tc.Spec.ControlPlaneEndpoint.Port == 6443 && len(tc.Status.FailureDomains) == 3
			return ok, fmt.Sprintf("endpoint %v, %d failure domains, %s", tc.Spec.ControlPlaneEndpoint, len(tc.Status.FailureDomains), ready(tc.Status.Conditions)), nil
		})
		machines := map[string]string{}
		for _, name := range []string{"quickstart-cp-0", "quickstart-worker-0"} {
			var tm infrav1.TerraformMachine
			f.waitFor(ctx, "TerraformMachine "+name+" is provisioned with a providerID and addresses", jobWait, func(ctx context.Context) (bool, string, error) {
				if _, err := f.get(ctx, name, &tm); err != nil {
					return false, "", err
				}
				ok := provisionedReady(tm.Status.WorkspaceStatus) && strings.HasPrefix(tm.Spec.ProviderID, "noop://"+f.ns+"/"+name+"/") &&
					len(tm.Status.Addresses) > 0 && tm.Status.FailureDomain != ""
				return ok, fmt.Sprintf("providerID %q, %d addresses, %s", tm.Spec.ProviderID, len(tm.Status.Addresses), ready(tm.Status.Conditions)), nil
			})
			machines[name] = tm.Spec.ProviderID
			f.wantRuntime(ctx, "TerraformMachine", name, tm.Status.WorkspaceStatus, rt, version)
		}
		var tmp infrav1.TerraformMachinePool
		f.waitFor(ctx, "the TerraformMachinePool is provisioned with 2 instances", jobWait, func(ctx context.Context) (bool, string, error) {
			if _, err := f.get(ctx, "quickstart-pool", &tmp); err != nil {
				return false, "", err
			}
			ok := provisionedReady(tmp.Status.WorkspaceStatus) && len(tmp.Spec.ProviderIDList) == 2 &&
				tmp.Status.Replicas != nil && *tmp.Status.Replicas == 2 && tmp.Status.Ready != nil && *tmp.Status.Ready
			return ok, fmt.Sprintf("providerIDList %v, %s", tmp.Spec.ProviderIDList, ready(tmp.Status.Conditions)), nil
		})
		for _, id := range tmp.Spec.ProviderIDList {
			if !strings.HasPrefix(id, "noop://"+f.ns+"/quickstart-pool/") {
				t.Errorf("the pool's providerIDList holds %q", id)
			}
		}
		f.wantRuntime(ctx, "TerraformCluster", "quickstart", tc.Status.WorkspaceStatus, rt, version)
		f.wantRuntime(ctx, "TerraformMachinePool", "quickstart-pool", tmp.Status.WorkspaceStatus, rt, version)

		// Cluster API takes the results.
		f.waitFor(ctx, "Cluster API took the endpoint and the providerIDs", controllerWait, func(ctx context.Context) (bool, string, error) {
			var cluster clusterv1.Cluster
			if _, err := f.get(ctx, "quickstart", &cluster); err != nil {
				return false, "", err
			}
			if !ptrTrue(cluster.Status.Initialization.InfrastructureProvisioned) || cluster.Spec.ControlPlaneEndpoint.Host != tc.Spec.ControlPlaneEndpoint.Host {
				return false, fmt.Sprintf("Cluster endpoint %q, infrastructure provisioned %v", cluster.Spec.ControlPlaneEndpoint.Host, cluster.Status.Initialization.InfrastructureProvisioned), nil
			}
			for name, id := range machines {
				var m clusterv1.Machine
				if _, err := f.get(ctx, name, &m); err != nil {
					return false, "", err
				}
				if m.Spec.ProviderID != id {
					return false, fmt.Sprintf("Machine %s has providerID %q", name, m.Spec.ProviderID), nil
				}
			}
			var mp clusterv1.MachinePool
			if _, err := f.get(ctx, "quickstart-pool", &mp); err != nil {
				return false, "", err
			}
			return ptrTrue(mp.Status.Initialization.InfrastructureProvisioned), "MachinePool infrastructure not provisioned yet", nil
		})

		f.teardown(ctx, objs, rt)
	}
}

// provisionedReady: the contract flag is set and Ready is True.
func provisionedReady(st infrav1.WorkspaceStatus) bool {
	return ptrTrue(st.Initialization.Provisioned) && meta.IsStatusConditionTrue(st.Conditions, "Ready")
}

func ptrTrue(b *bool) bool { return b != nil && *b }

// wantRuntime checks that the object was applied by runtime rt: its apply
// Job ran the rt image, the status names the runtime's version, and the
// state in its Secrets was written by it.
func (f *flow) wantRuntime(ctx context.Context, kind, name string, st infrav1.WorkspaceStatus, rt, version string) {
	f.t.Helper()
	applies := f.runs(kind, name, string(infrav1.OperationApply))
	if !slices.ContainsFunc(applies, func(r localnode.Run) bool { return r.ExitCode == 0 && strings.HasSuffix(r.Image, ":"+rt) }) {
		f.t.Errorf("%s/%s: no successful apply Job ran a %s image", kind, name, rt)
	}
	if st.Source == nil || st.Source.RuntimeVersion != version {
		f.t.Errorf("%s/%s: status.source %+v, want runtime version %s (%s)", kind, name, st.Source, version, rt)
	}
	s, _, err := f.readState(ctx, kind, name)
	if err != nil {
		f.t.Errorf("%s/%s: reading its state: %v", kind, name, err)
		return
	}
	if s.TerraformVersion != version || s.ManagedResources == 0 {
		f.t.Errorf("%s/%s: state written by %q with %d resources, want %s %s", kind, name, s.TerraformVersion, s.ManagedResources, rt, version)
	}
}
