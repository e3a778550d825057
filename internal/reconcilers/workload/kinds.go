package workload

import (
	"context"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/roles"
	"captf.io/captf/internal/workspace"
	"captf.io/captf/pkg/state"
)

// Options are the workload controllers' settings from the manager's flags.
type Options struct {
	// Cluster, Machine and MachinePool are the workers per kind (the
	// --<kind>-concurrency flags).
	Cluster, Machine, MachinePool int
	// WatchFilter, when set, limits the controllers to objects labelled
	// cluster.x-k8s.io/watch-filter=<WatchFilter> (--watch-filter).
	WatchFilter string
	// Namespace, when set, is the one namespace watched (--namespace).
	Namespace string
}

// Setup registers the three workload controllers with engine.
func Setup(mgr ctrl.Manager, engine *workspace.Engine, o Options) error {
	reader := mgr.GetClient()
	sources, err := sourcesCache(mgr, o.Namespace)
	if err != nil {
		return err
	}
	shardOf := func(role roles.Role) shard { return shard{reader: reader, role: role, value: o.WatchFilter} }
	if err := indexGates(context.Background(), mgr); err != nil {
		return err
	}

	s := shardOf(roles.Cluster{})
	cl := &Reconciler{Role: s.role, Engine: engine}
	b := cl.builder(mgr, "terraformcluster", o.Cluster, s, &infrav1.TerraformClusterList{}).
		Watches(&clusterv1.Cluster{}, s.mapped(clusterToInfra), builder.WithPredicates(clusterRead)).
		Watches(&infrav1.TerraformClusterIdentity{}, s.mapped(identityUsers(reader, s.role, &infrav1.TerraformClusterList{})), specChanged)
	if err := withSources(b, sourceWatches(sources, s, &infrav1.TerraformClusterList{}, engine)).Complete(cl); err != nil {
		return err
	}

	s = shardOf(roles.Machine{})
	m := &Reconciler{Role: s.role, Engine: engine}
	b = m.builder(mgr, "terraformmachine", o.Machine, s, &infrav1.TerraformMachineList{}).
		Watches(&clusterv1.Machine{}, s.mapped(machineToInfra), builder.WithPredicates(machineRead)).
		Watches(&infrav1.TerraformCluster{}, s.mapped(clusterMembers(reader, &infrav1.TerraformMachineList{})), builder.WithPredicates(readByMembers)).
		Watches(&clusterv1.Cluster{}, s.mapped(pausedMembers(reader, &infrav1.TerraformMachineList{})), builder.WithPredicates(memberReadOfCluster)).
		Watches(&infrav1.TerraformClusterIdentity{}, s.mapped(identityUsers(reader, s.role, &infrav1.TerraformMachineList{})), specChanged)
	if err := withSources(b, sourceWatches(sources, s, &infrav1.TerraformMachineList{}, engine)).Complete(m); err != nil {
		return err
	}

	s = shardOf(roles.MachinePool{})
	mp := &Reconciler{Role: s.role, Engine: engine}
	b = mp.builder(mgr, "terraformmachinepool", o.MachinePool, s, &infrav1.TerraformMachinePoolList{}).
		Watches(&clusterv1.MachinePool{}, s.mapped(poolToInfra), builder.WithPredicates(machinePoolRead)).
		Watches(&infrav1.TerraformCluster{}, s.mapped(clusterMembers(reader, &infrav1.TerraformMachinePoolList{})), builder.WithPredicates(readByMembers)).
		Watches(&clusterv1.Cluster{}, s.mapped(pausedMembers(reader, &infrav1.TerraformMachinePoolList{})), builder.WithPredicates(memberReadOfCluster)).
		Watches(&infrav1.TerraformClusterIdentity{}, s.mapped(identityUsers(reader, s.role, &infrav1.TerraformMachinePoolList{})), specChanged)
	return withSources(b, sourceWatches(sources, s, &infrav1.TerraformMachinePoolList{}, engine)).Complete(mp)
}

// withSources adds the raw source watches to b.
func withSources(b *builder.Builder, srcs []source.Source) *builder.Builder {
	for _, s := range srcs {
		b = b.WatchesRawSource(s)
	}
	return b
}

// infraRequest maps a Cluster API object to the Terraform* object its
// infrastructure reference names.
func infraRequest(ns string, ref clusterv1.ContractVersionedObjectReference, kind string) []reconcile.Request {
	if ref.APIGroup != infrav1.GroupVersion.Group || ref.Kind != kind || ref.Name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: ns, Name: ref.Name}}}
}

func clusterToInfra(_ context.Context, o client.Object) []reconcile.Request {
	c := o.(*clusterv1.Cluster)
	return infraRequest(c.Namespace, c.Spec.InfrastructureRef, state.KindCluster)
}

func machineToInfra(_ context.Context, o client.Object) []reconcile.Request {
	m := o.(*clusterv1.Machine)
	return infraRequest(m.Namespace, m.Spec.InfrastructureRef, state.KindMachine)
}

func poolToInfra(_ context.Context, o client.Object) []reconcile.Request {
	mp := o.(*clusterv1.MachinePool)
	return infraRequest(mp.Namespace, mp.Spec.Template.Spec.InfrastructureRef, state.KindMachinePool)
}

// clusterMembers maps a TerraformCluster to the machines or pools of its
// cluster, so that they see its exports and defaults at once.
func clusterMembers(r client.Reader, list client.ObjectList) handler.MapFunc {
	return membersOf(r, list, roles.ClusterNameOf)
}

// pausedMembers maps a Cluster API Cluster to the machines or pools of
// the cluster, so that they see it paused or unpaused at once.
func pausedMembers(r client.Reader, list client.ObjectList) handler.MapFunc {
	return membersOf(r, list, client.Object.GetName)
}

// membersOf maps an object to the machines or pools (list's kind) of the
// cluster clusterName names it for.
func membersOf(r client.Reader, list client.ObjectList, clusterName func(client.Object) string) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		cluster := clusterName(o)
		if cluster == "" {
			return nil
		}
		l := list.DeepCopyObject().(client.ObjectList)
		if err := r.List(ctx, l, client.InNamespace(o.GetNamespace()), client.MatchingLabels{infrav1.ClusterNameLabel: cluster}); err != nil {
			return nil
		}
		var objs []client.Object
		switch items := l.(type) {
		case *infrav1.TerraformMachineList:
			for i := range items.Items {
				objs = append(objs, &items.Items[i])
			}
		case *infrav1.TerraformMachinePoolList:
			for i := range items.Items {
				objs = append(objs, &items.Items[i])
			}
		}
		return requests(objs...)
	}
}

// requests turns objects into reconcile requests.
func requests(objs ...client.Object) []reconcile.Request {
	out := make([]reconcile.Request, 0, len(objs))
	for _, o := range objs {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(o)})
	}
	return out
}
