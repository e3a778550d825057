package e2e

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"captf.io/captf/internal/devenv"
)

// The control-plane stand-in is a Cluster API control plane provider of
// the v1beta2 contract that has no machines, like a hosted control plane:
// a KubeadmControlPlane cannot initialize without a workload cluster it
// can reach, and the flows have none. It stands in for the control plane
// of a ClusterClass, as docs/concepts/clusterclass.md says, and honours
// the contract Cluster API's controllers read:
//   - it waits for the Cluster's infrastructure to be provisioned, then
//     writes the Cluster's CA Secret (<cluster>-ca) and its kubeconfig
//     Secret (<cluster>-kubeconfig), which names the local environment's
//     own API server: the "workload cluster" kubeadm's bootstrap provider
//     creates its join tokens in;
//   - status.initialization.controlPlaneInitialized,
//     status.externalManagedControlPlane (it has no Machines),
//     status.version (the spec's, at once: an upgrade is instant), the
//     replica counters (the spec's, as a hosted control plane reports its
//     own replicas) and an Available condition, each for the observed
//     generation.
var standInGVK = schema.GroupVersionKind{Group: "controlplane.test.captf.io", Version: "v1alpha1", Kind: "StandInControlPlane"}

// installStandIn creates the stand-in's CRDs, once for the package, and
// waits until they are served.
func installStandIn(ctx context.Context, env *devenv.Env) error {
	crds, err := devenv.ReadManifests(filepath.Join(env.Repo, "test", "e2e", "testdata", "standin", "crds.yaml"))
	if err != nil {
		return err
	}
	if err := devenv.Create(ctx, env.Client, crds); err != nil {
		return err
	}
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		for _, o := range crds {
			var crd apiextensionsv1.CustomResourceDefinition
			if err := env.Client.Get(ctx, client.ObjectKey{Name: o.GetName()}, &crd); err != nil {
				return false, nil
			}
			established := false
			for _, c := range crd.Status.Conditions {
				established = established || c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue
			}
			if !established {
				return false, nil
			}
		}
		return true, nil
	})
}

// runStandIn runs the stand-in for the control planes of namespace ns
// until ctx ends. It polls: a stand-in has no informers of its own.
func runStandIn(ctx context.Context, env *devenv.Env, ns string, failed func(error)) {
	kubeconfig, err := os.ReadFile(env.Kubeconfig)
	if err != nil {
		failed(err)
		return
	}
	ca, err := newCA()
	if err != nil {
		failed(err)
		return
	}
	// The Secrets it wrote, by Cluster UID and suffix: written once, as a
	// controller that watches would, not at every poll.
	written := map[string]bool{}
	_ = wait.PollUntilContextCancel(ctx, 300*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		var list unstructured.UnstructuredList
		list.SetGroupVersionKind(standInGVK.GroupVersion().WithKind(standInGVK.Kind + "List"))
		if err := env.Client.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return false, nil
		}
		for i := range list.Items {
			if err := reconcileStandIn(ctx, env.Client, &list.Items[i], kubeconfig, ca, written); err != nil && ctx.Err() == nil && !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
				failed(fmt.Errorf("control-plane stand-in %s: %w", list.Items[i].GetName(), err))
			}
		}
		return false, nil
	})
}

func reconcileStandIn(ctx context.Context, c client.Client, cp *unstructured.Unstructured, kubeconfig []byte, ca map[string][]byte, written map[string]bool) error {
	if cp.GetDeletionTimestamp() != nil {
		return nil
	}
	name := cp.GetLabels()[clusterv1.ClusterNameLabel]
	var cluster clusterv1.Cluster
	if name == "" {
		return nil // Cluster API labels it first
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: cp.GetNamespace(), Name: name}, &cluster); err != nil {
		return err
	}
	if cluster.Status.Initialization.InfrastructureProvisioned == nil || !*cluster.Status.Initialization.InfrastructureProvisioned || !cluster.Spec.ControlPlaneEndpoint.IsValid() {
		return nil // the contract: wait for the infrastructure and its endpoint
	}
	owner := metav1.NewControllerRef(&cluster, clusterv1.GroupVersion.WithKind("Cluster"))
	for suffix, data := range map[string]map[string][]byte{"ca": ca, "kubeconfig": {"value": kubeconfig}} {
		key := string(cluster.UID) + "/" + suffix
		if written[key] {
			continue
		}
		s := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{
				Name: name + "-" + suffix, Namespace: cp.GetNamespace(),
				Labels:          map[string]string{clusterv1.ClusterNameLabel: name},
				OwnerReferences: []metav1.OwnerReference{*owner},
			},
			Type: clusterv1.ClusterSecretType,
			Data: data,
		}
		if err := c.Create(ctx, s); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
		written[key] = true
	}
	version, _, _ := unstructured.NestedString(cp.Object, "spec", "version")
	replicas, found, _ := unstructured.NestedInt64(cp.Object, "spec", "replicas")
	if !found {
		replicas = 1
	}
	status := map[string]any{
		"observedGeneration": cp.GetGeneration(),
		"initialization":     map[string]any{"controlPlaneInitialized": true},
		// No machines: Cluster API expects none of this control plane.
		"externalManagedControlPlane": true,
		"version":                     version,
		"replicas":                    replicas, "readyReplicas": replicas, "availableReplicas": replicas, "upToDateReplicas": replicas,
		"conditions": []any{map[string]any{
			"type": clusterv1.AvailableCondition, "status": "True", "reason": "Available",
			"observedGeneration": cp.GetGeneration(), "lastTransitionTime": time.Now().UTC().Format(time.RFC3339),
		}},
	}
	current, _, _ := unstructured.NestedMap(cp.Object, "status")
	if current["version"] == version && current["observedGeneration"] == cp.GetGeneration() && current["replicas"] == replicas {
		return nil
	}
	patch := &unstructured.Unstructured{Object: map[string]any{"status": status}}
	raw, err := patch.MarshalJSON()
	if err != nil {
		return err
	}
	return c.Status().Patch(ctx, cp, client.RawPatch(types.MergePatchType, raw))
}

// newCA is a self-signed cluster CA as Cluster API stores one: tls.crt and
// tls.key in PEM.
func newCA() (map[string][]byte, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "kubernetes"},
		NotBefore:             time.Now().Add(-time.Minute),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	return map[string][]byte{
		"tls.crt": pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		"tls.key": pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}),
	}, nil
}
