package roles

import (
	"context"
	"encoding/json"
	"errors"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/pkg/state"
)

// StateLister lists state Secrets through r (the manager passes its
// uncached API reader: Secret data is never cached): their metadata first,
// and their data only when they are a plausible state (state.Plausible);
// otherwise the metadata alone, on which Decode finds the same fault.
func StateLister(r client.Reader) state.Lister {
	return state.ListerFunc(func(ctx context.Context, namespace string, selector labels.Selector) ([]corev1.Secret, error) {
		metas := state.SecretMetadataList()
		if err := r.List(ctx, metas, client.InNamespace(namespace), client.MatchingLabelsSelector{Selector: selector}); err != nil {
			return nil, err
		}
		suffix, _ := selector.RequiresExactMatch(state.LabelSecretSuffix)
		if state.Plausible(suffix, metas.Items) != nil {
			return state.MetadataOnly(metas.Items), nil
		}
		return ListStateData(ctx, r, namespace, selector)
	})
}

// ListStateData lists the state Secrets selector selects with their data,
// live, a page at a time and never more than state.MaxChunks+1 of them:
// enough for Decode to refuse a state with too many pieces, and a bound on
// what Secrets that appeared since their metadata was checked can cost.
func ListStateData(ctx context.Context, r client.Reader, namespace string, selector labels.Selector) ([]corev1.Secret, error) {
	var out []corev1.Secret
	opts := &client.ListOptions{Namespace: namespace, LabelSelector: selector}
	for {
		opts.Limit = int64(state.MaxChunks + 1 - len(out))
		var list corev1.SecretList
		if err := r.List(ctx, &list, opts); err != nil {
			return nil, err
		}
		out = append(out, list.Items...)
		if list.Continue == "" || len(out) > state.MaxChunks {
			return out, nil
		}
		opts.Continue = list.Continue
	}
}

// ClusterStateReader is a client.Reader that also serves a
// TerraformCluster's decoded state (the engine's, from its decode cache).
// readClusterOutputs reads and decodes the state itself through any other
// Reader.
type ClusterStateReader interface {
	client.Reader
	ReadClusterState(ctx context.Context, tc *infrav1.TerraformCluster, suffix string) (*state.State, error)
}

// clusterOutputs is what machines and pools read from their cluster's
// state: exports and the failure domain names.
type clusterOutputs struct {
	Exports        json.RawMessage
	FailureDomains []string
}

// readClusterOutputs reads the TerraformCluster's state (never its status)
// for the exports handoff. An externally managed TerraformCluster hands
// over {} and its status.failureDomains without a state read. A cluster
// not provisioned yet, or whose state cannot be read, stops the machine or
// pool with a DependenciesReady condition.
func readClusterOutputs(ctx context.Context, r client.Reader, tc *infrav1.TerraformCluster) (clusterOutputs, *metav1.Condition, error) {
	var out clusterOutputs
	if tc == nil {
		return out, nil, nil
	}
	if IsExternallyManaged(tc) {
		for _, fd := range tc.Status.FailureDomains {
			out.FailureDomains = append(out.FailureDomains, fd.Name)
		}
		return out, nil, nil
	}
	if tc.Status.Initialization.Provisioned == nil || !*tc.Status.Initialization.Provisioned {
		return out, notReady(metav1.ConditionUnknown, infrav1.WaitingForClusterInfrastructureReason,
			"Waiting for TerraformCluster %s to be provisioned", tc.Name), nil
	}
	suffix, err := state.Suffix(tc.Namespace, state.KindCluster, tc.Name)
	if err != nil {
		return out, nil, err
	}
	var st *state.State
	if csr, ok := r.(ClusterStateReader); ok {
		st, err = csr.ReadClusterState(ctx, tc, suffix)
	} else {
		st, err = state.Read(ctx, StateLister(r), tc.Namespace, suffix)
	}
	if err != nil {
		if _, ok := state.ReasonOf(err); ok || errors.Is(err, state.ErrNotFound) {
			return out, notReady(metav1.ConditionUnknown, infrav1.WaitingForClusterExportsReason,
				"The state of TerraformCluster %s cannot be read (%s), so its exports are unknown", tc.Name, reasonText(err)), nil
		}
		return out, nil, err
	}
	if o, ok := st.Outputs["exports"]; ok {
		out.Exports = o.Value
	}
	if o, ok := st.Outputs["failure_domains"]; ok {
		var fds []struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(o.Value, &fds) == nil {
			for _, fd := range fds {
				out.FailureDomains = append(out.FailureDomains, fd.Name)
			}
		}
	}
	return out, nil, nil
}

func reasonText(err error) string {
	if r, ok := state.ReasonOf(err); ok {
		return string(r)
	}
	return "StateNotFound"
}
