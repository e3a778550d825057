package scale_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/inputs"
	"captf.io/captf/internal/records"
	"captf.io/captf/internal/roles"
	"captf.io/captf/pkg/contract"
	"captf.io/captf/pkg/state"
)

// What every world's cluster and machines look like.
const (
	clusterName   = "demo"
	failureDomain = "zone-a"
	endpointHost  = "api.scale.test"
	endpointPort  = 6443
	clusterImage  = "local/noop-cluster:tofu"
	machineImage  = "local/noop-machine:tofu"
	// creators is how many machines are created at once.
	creators = 16
)

// world is one namespace with an identity, a provisioned Cluster and its
// TerraformCluster, and the machines of a phase.
type world struct {
	ns, identity string
	// stateBytes sums the gzipped states of the machines created.
	stateBytes atomic.Int64
}

func randomSuffix() (string, error) {
	b := make([]byte, 3)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// newWorld makes a namespace and a credentials Secret.
func newWorld(ctx context.Context, prefix string) (*world, error) {
	suffix, err := randomSuffix()
	if err != nil {
		return nil, err
	}
	w := &world{ns: prefix + "-" + suffix}
	w.identity = "id-" + w.ns
	return w, createAll(ctx,
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: w.ns}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: "cloud"}, Data: map[string][]byte{"TOKEN": []byte("scale")}})
}

// newIdentity creates the identity allowing the namespace (its webhook
// needs the manager).
func (w *world) newIdentity(ctx context.Context) error {
	return createAll(ctx, &infrav1.TerraformClusterIdentity{
		ObjectMeta: metav1.ObjectMeta{Name: w.identity},
		Spec: infrav1.TerraformClusterIdentitySpec{
			SecretRef:         infrav1.SecretReference{Namespace: w.ns, Name: "cloud"},
			AllowedNamespaces: &infrav1.AllowedNamespaces{List: []string{w.ns}},
		},
	})
}

func createAll(ctx context.Context, objs ...client.Object) error {
	for _, obj := range objs {
		if err := env.Client.Create(ctx, obj); err != nil {
			return fmt.Errorf("creating %T %s: %w", obj, obj.GetName(), err)
		}
	}
	return nil
}

func ref(kind, name string) clusterv1.ContractVersionedObjectReference {
	return clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: kind, Name: name}
}

func ownedBy(kind string, obj client.Object) []metav1.OwnerReference {
	return []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: kind, Name: obj.GetName(), UID: obj.GetUID()}}
}

// driftOff disables drift checks, so that no Job is ever due.
func driftOff() *int32 { return ptr.To[int32](0) }

// newCluster creates the Cluster, the state of a successful apply of its
// TerraformCluster's current inputs, and the TerraformCluster, owned as
// Cluster API's Cluster controller owns it. Its defaults turn drift
// checks off for the machines.
func (w *world) newCluster(ctx context.Context) (*infrav1.TerraformCluster, error) {
	endpoint := clusterv1.APIEndpoint{Host: endpointHost, Port: endpointPort}
	c := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: clusterName},
		Spec:       clusterv1.ClusterSpec{InfrastructureRef: ref(state.KindCluster, clusterName), ControlPlaneEndpoint: endpoint},
	}
	if err := createAll(ctx, c); err != nil {
		return nil, err
	}
	tc := &infrav1.TerraformCluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: clusterName,
			Labels: map[string]string{clusterv1.ClusterNameLabel: clusterName}, OwnerReferences: ownedBy("Cluster", c)},
		Spec: infrav1.TerraformClusterSpec{
			Source:               infrav1.SourceSpec{Image: clusterImage},
			IdentityRef:          &infrav1.IdentityReference{Name: w.identity},
			ControlPlaneEndpoint: endpoint,
			Drift:                &infrav1.ClusterDriftSpec{IntervalSeconds: driftOff()},
			Defaults:             &infrav1.ClusterDefaults{Drift: &infrav1.ClusterDriftSpec{IntervalSeconds: driftOff()}},
		},
	}
	// The cluster's plan key keys its inputs hash: the fixture makes it,
	// as the manager would have at the first apply.
	key := make([]byte, inputs.MinKeyBytes)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	planKey := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: records.PlanKeyName(state.KindCluster, clusterName)},
		Data: map[string][]byte{records.PlanKeyData: key}}
	if err := createAll(ctx, planKey); err != nil {
		return nil, err
	}
	hash, err := clusterInputsHash(ctx, tc, key)
	if err != nil {
		return nil, err
	}
	data, err := gzippedState(0, clusterOutputs(endpointHost, endpointPort, failureDomain), 0)
	if err != nil {
		return nil, err
	}
	sec, err := stateSecret(w.ns, state.KindCluster, clusterName, clusterName, hash, data)
	if err != nil {
		return nil, err
	}
	return tc, createAll(ctx, sec, tc)
}

// clusterInputsHash is the inputs hash the manager computes for tc (a
// mutable object re-applies when it differs from its state's): the cluster
// role's inputs, no user variables, hashed as in workspace's buildInputs.
func clusterInputsHash(ctx context.Context, tc *infrav1.TerraformCluster, key []byte) (string, error) {
	role := roles.Cluster{}
	owner, err := role.Owner(ctx, env.Client, tc)
	if err != nil {
		return "", err
	}
	ri, cond, err := role.Inputs(ctx, env.Client, tc, owner, nil)
	switch {
	case err != nil:
		return "", err
	case cond != nil:
		return "", fmt.Errorf("the cluster's inputs cannot be built: %s", cond.Message)
	}
	tfvars, err := ri.Tfvars()
	if err != nil {
		return "", err
	}
	values, sensitive, err := inputs.MergeVariables(tc.Spec.Variables, nil)
	if err != nil {
		return "", err
	}
	return inputs.Hash(key, contract.RoleCluster, tc.Spec.Source.Image, tfvars, values, sensitive)
}

func machineName(i int) string { return fmt.Sprintf("m-%04d", i) }

// newMachines creates machines from up to (not including) to, creators at
// a time, each with padding instances in its state.
func (w *world) newMachines(ctx context.Context, from, to, padding int) error {
	next := atomic.Int64{}
	next.Store(int64(from))
	var wg sync.WaitGroup
	errs := make([]error, creators)
	for c := range creators {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < to && ctx.Err() == nil; i = int(next.Add(1) - 1) {
				if err := w.newMachine(ctx, i, padding); err != nil {
					errs[c] = err
					return
				}
			}
		})
	}
	wg.Wait()
	return errors.Join(append(errs, ctx.Err())...)
}

// newMachine creates what Cluster API and a finished apply leave behind
// for one machine: its bootstrap data Secret, its state, the Machine and
// the TerraformMachine the Machine owns.
func (w *world) newMachine(ctx context.Context, i, padding int) error {
	name := machineName(i)
	data, err := gzippedState(uint64(i)+1, machineOutputs(name, failureDomain), padding)
	if err != nil {
		return err
	}
	w.stateBytes.Add(int64(len(data)))
	sec, err := stateSecret(w.ns, state.KindMachine, name, clusterName, fakeInputsHash(name), data)
	if err != nil {
		return err
	}
	boot, m, tm := w.machineObjects(name)
	if err := createAll(ctx, boot, sec, m); err != nil {
		return err
	}
	tm.OwnerReferences = ownedBy("Machine", m)
	return createAll(ctx, tm)
}

// machineObjects are a machine's bootstrap data Secret, its Machine, and
// its TerraformMachine, whose owner reference to the Machine the caller
// sets once the Machine is created (ownedBy needs its UID).
func (w *world) machineObjects(name string) (*corev1.Secret, *clusterv1.Machine, *infrav1.TerraformMachine) {
	boot := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: name + "-bootstrap"},
		Data: map[string][]byte{"value": []byte("#cloud-config\n"), "format": []byte("cloud-config")}}
	m := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: name, Labels: map[string]string{clusterv1.ClusterNameLabel: clusterName}},
		Spec: clusterv1.MachineSpec{ClusterName: clusterName, Version: "v1.34.0", FailureDomain: failureDomain,
			Bootstrap:         clusterv1.Bootstrap{DataSecretName: ptr.To(boot.Name)},
			InfrastructureRef: ref(state.KindMachine, name)},
	}
	tm := &infrav1.TerraformMachine{
		ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: name, Labels: map[string]string{clusterv1.ClusterNameLabel: clusterName}},
		Spec: infrav1.TerraformMachineSpec{Source: infrav1.SourceSpec{Image: machineImage},
			Drift: &infrav1.MachineDriftSpec{IntervalSeconds: driftOff()}},
	}
	return boot, m, tm
}
