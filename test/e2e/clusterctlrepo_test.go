//go:build e2eclusterctl

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"captf.io/captf/internal/devenv"
	"captf.io/captf/internal/release"
)

// capiVersion is the Cluster API version hack/tools pins
// (hack/tools/versions.env CAPI_VERSION): the version the local
// environment's Cluster API providers are registered at.
const capiVersion = "v1.14.2"

// capiProvider is one of the Cluster API providers the local environment
// runs, as a clusterctl repository names it.
type capiProvider struct {
	name, typ string // clusterctl's provider name and type
	label     string // the repository directory: clusterctl's manifest label
	file      string // the components file
	namespace string // the namespace it installs into
	toolDir   string // its directory in the tool cache, with its CRDs
}

var capiProviders = []capiProvider{
	{"cluster-api", "CoreProvider", "cluster-api", "core-components.yaml", "capi-system", "capi"},
	{"kubeadm", "BootstrapProvider", "bootstrap-kubeadm", "bootstrap-components.yaml", "capi-kubeadm-bootstrap-system", "capi-kubeadm-bootstrap"},
	{"kubeadm", "ControlPlaneProvider", "control-plane-kubeadm", "control-plane-components.yaml", "capi-kubeadm-control-plane-system", "capi-kubeadm-control-plane"},
}

// clusterctlRepo is a clusterctl local repository for one local
// environment (started with --kubeadm), and the configuration file that
// names its providers: CAPTF's releases rendered from this tree, and the
// Cluster API providers the environment runs out of band, whose
// components are their CRDs as the environment installed them (so that
// `clusterctl init` registers them without changing what runs).
type clusterctlRepo struct {
	f      *flow
	tools  string
	dir    string
	config string
	kube   string // the environment's admin kubeconfig
}

// newClusterctlRepo writes the repository with CAPTF at each of versions,
// and installs the cert-manager stand-in (see installCertManagerAPI).
func newClusterctlRepo(ctx context.Context, f *flow, e *processEnv, tools string, versions ...string) *clusterctlRepo {
	f.t.Helper()
	r := &clusterctlRepo{f: f, tools: tools, dir: filepath.Join(e.dir, "repository"), config: filepath.Join(e.dir, "clusterctl.yaml"), kube: e.kubeconfig}
	var entries strings.Builder
	entries.WriteString("providers:\n")
	for _, v := range versions {
		if _, err := release.Render(release.Options{Repo: e.root, Version: v, Out: r.dir}); err != nil {
			f.t.Fatal(err)
		}
	}
	fmt.Fprintf(&entries, "- name: terraform\n  type: InfrastructureProvider\n  url: file://%s\n",
		filepath.Join(r.dir, "infrastructure-terraform", versions[0], release.ComponentsFile))
	for _, p := range capiProviders {
		path := r.writeCAPIProvider(ctx, p)
		fmt.Fprintf(&entries, "- name: %s\n  type: %s\n  url: file://%s\n", p.name, p.typ, path)
	}
	if err := os.WriteFile(r.config, []byte(entries.String()), 0o600); err != nil {
		f.t.Fatal(err)
	}
	installCertManagerAPI(ctx, f)
	return r
}

// writeCAPIProvider writes p's components (its namespace and the live
// CRDs named in the tool cache) and metadata, and returns the components'
// path.
func (r *clusterctlRepo) writeCAPIProvider(ctx context.Context, p capiProvider) string {
	t := r.f.t
	t.Helper()
	shipped, err := devenv.ReadManifestDir(filepath.Join(r.tools, p.toolDir, "crd"))
	if err != nil {
		t.Fatal(err)
	}
	docs := [][]byte{fmt.Appendf(nil, "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n", p.namespace)}
	for _, s := range shipped {
		live := &unstructured.Unstructured{}
		live.SetGroupVersionKind(schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"})
		if err := r.f.env.Client.Get(ctx, client.ObjectKey{Name: s.GetName()}, live); err != nil {
			t.Fatalf("the environment has no CRD %s of the %s provider (start it with --kubeadm): %v", s.GetName(), p.label, err)
		}
		for _, field := range []string{"resourceVersion", "uid", "creationTimestamp", "generation", "managedFields"} {
			unstructured.RemoveNestedField(live.Object, "metadata", field)
		}
		unstructured.RemoveNestedField(live.Object, "status")
		data, err := yaml.Marshal(live.Object)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, data)
	}
	dir := filepath.Join(r.dir, p.label, capiVersion)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var minor string
	if _, err := fmt.Sscanf(capiVersion, "v1.%s", &minor); err != nil {
		t.Fatal(err)
	}
	minor, _, _ = strings.Cut(minor, ".")
	metadata := fmt.Sprintf("apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Metadata\nreleaseSeries:\n- major: 1\n  minor: %s\n  contract: v1beta2\n", minor)
	path := filepath.Join(dir, p.file)
	for name, data := range map[string][]byte{path: joinDocs(docs), filepath.Join(dir, release.MetadataFile): []byte(metadata)} {
		if err := os.WriteFile(name, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

func joinDocs(docs [][]byte) []byte {
	var out []byte
	for _, d := range docs {
		out = append(out, "---\n"...)
		out = append(out, d...)
	}
	return out
}

// certManagerCRDs are the stand-in for cert-manager's API: the Issuer and
// Certificate kinds, taking any object. cert-manager cannot run here (no
// Deployment runs on the local node), and the local environment makes the
// webhook server's certificate itself; clusterctl only checks that the
// API answers (it creates and deletes a test Issuer and Certificate) and
// then treats cert-manager as installed by someone else, as it does on a
// management cluster whose cert-manager the operator manages.
var certManagerCRDs = []struct{ plural, kind string }{{"issuers", "Issuer"}, {"certificates", "Certificate"}}

func installCertManagerAPI(ctx context.Context, f *flow) {
	f.t.Helper()
	var objs []*unstructured.Unstructured
	for _, c := range certManagerCRDs {
		crd := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
			"metadata": map[string]any{"name": c.plural + ".cert-manager.io"},
			"spec": map[string]any{
				"group": "cert-manager.io", "scope": "Namespaced",
				"names": map[string]any{"plural": c.plural, "singular": strings.ToLower(c.kind), "kind": c.kind, "listKind": c.kind + "List"},
				"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
					"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}},
			},
		}}
		objs = append(objs, crd)
	}
	f.create(ctx, objs)
	f.waitFor(ctx, "the cert-manager API is served", controllerWait, func(ctx context.Context) (bool, string, error) {
		for _, c := range certManagerCRDs {
			list := &unstructured.UnstructuredList{}
			list.SetGroupVersionKind(schema.GroupVersionKind{Group: "cert-manager.io", Version: "v1", Kind: c.kind + "List"})
			if err := f.env.Client.List(ctx, list); err != nil {
				return false, err.Error(), nil
			}
		}
		return true, "", nil
	})
}

// run runs clusterctl with the repository's configuration against the
// environment and returns its output and how long it took.
func (r *clusterctlRepo) run(ctx context.Context, args ...string) (string, time.Duration) {
	r.f.t.Helper()
	began := time.Now()
	out, err := runClusterctl(ctx, r.f.t, r.tools, append(args, "--config", r.config, "--kubeconfig", r.kube)...)
	if err != nil {
		r.f.t.Fatal(err)
	}
	took := time.Since(began)
	r.f.t.Logf("clusterctl %s: %s", strings.Join(args, " "), took.Round(100*time.Millisecond))
	return out, took
}

// outOfBand runs fn (a clusterctl command that installs components) and
// then puts back what the local environment runs out of band, as
// docs/getting-started.md says: the webhook configuration that sends
// CAPTF's admission to the manager process (the release's sends it to the
// Service of a Deployment), and the providers' Deployments scaled to zero
// (their images are not here; the environment runs their managers).
func (r *clusterctlRepo) outOfBand(ctx context.Context, fn func()) {
	t := r.f.t
	t.Helper()
	c := r.f.env.Client
	var saved admissionregistrationv1.ValidatingWebhookConfiguration
	if err := c.Get(ctx, client.ObjectKey{Name: "captf-validating-webhook-configuration"}, &saved); err != nil {
		t.Fatal(err)
	}
	fn()
	var live admissionregistrationv1.ValidatingWebhookConfiguration
	if err := c.Get(ctx, client.ObjectKey{Name: saved.Name}, &live); err != nil {
		t.Fatal(err)
	}
	live.Webhooks = saved.Webhooks
	if err := c.Update(ctx, &live); err != nil {
		t.Fatal(err)
	}
	var deployments appsv1.DeploymentList
	if err := c.List(ctx, &deployments, client.HasLabels{"cluster.x-k8s.io/provider"}); err != nil {
		t.Fatal(err)
	}
	for i := range deployments.Items {
		d := &deployments.Items[i]
		if d.Spec.Replicas != nil && *d.Spec.Replicas == 0 {
			continue
		}
		patch := client.MergeFrom(d.DeepCopy())
		d.Spec.Replicas = ptr.To[int32](0)
		if err := c.Patch(ctx, d, patch); err != nil {
			t.Fatal(err)
		}
	}
}

// inventory is the version of each provider clusterctl's inventory holds,
// by namespace/name.
func (r *clusterctlRepo) inventory(ctx context.Context) map[string]string {
	r.f.t.Helper()
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(schema.GroupVersionKind{Group: "clusterctl.cluster.x-k8s.io", Version: "v1alpha3", Kind: "ProviderList"})
	if err := r.f.env.Client.List(ctx, list); err != nil {
		r.f.t.Fatal(err)
	}
	out := map[string]string{}
	for _, p := range list.Items {
		v, _, _ := unstructured.NestedString(p.Object, "version")
		out[types.NamespacedName{Namespace: p.GetNamespace(), Name: p.GetName()}.String()] = v
	}
	return out
}
