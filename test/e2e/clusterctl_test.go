package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"captf.io/captf/internal/devenv"
	"captf.io/captf/internal/release"
)

// releaseVersion is the version the suite renders its release as: a
// clusterctl repository the real clusterctl (built by hack/tools) reads
// through a file:// provider URL, as the operator reference documents.
const releaseVersion = "v0.1.0"

var shippedRelease struct {
	once   sync.Once
	config string
	dir    string
	err    error
}

// clusterctlConfig renders the release once for the package and returns
// the clusterctl configuration file that names it, and its directory.
func clusterctlConfig(t *testing.T, env *devenv.Env) (config, dir string) {
	t.Helper()
	shippedRelease.once.Do(func() {
		root := filepath.Join(shared.dir, "repository")
		shippedRelease.dir, shippedRelease.err = release.Render(release.Options{Repo: env.Repo, Version: releaseVersion, Out: root})
		if shippedRelease.err != nil {
			return
		}
		shippedRelease.config = filepath.Join(shared.dir, "clusterctl.yaml")
		shippedRelease.err = os.WriteFile(shippedRelease.config, fmt.Appendf(nil,
			"providers:\n- name: terraform\n  type: InfrastructureProvider\n  url: file://%s\n",
			filepath.Join(shippedRelease.dir, release.ComponentsFile)), 0o600)
	})
	if shippedRelease.err != nil {
		t.Fatalf("rendering release %s: %v", releaseVersion, shippedRelease.err)
	}
	return shippedRelease.config, shippedRelease.dir
}

// clusterctl runs the real clusterctl with the suite's configuration and
// the variables in its environment (and nothing of the user's: a HOME of
// its own, no version check).
func clusterctl(ctx context.Context, t *testing.T, env *devenv.Env, vars map[string]string, args ...string) ([]byte, error) {
	t.Helper()
	config, _ := clusterctlConfig(t, env)
	cmd := exec.CommandContext(ctx, filepath.Join(env.Tools, "bin", "clusterctl"), append(args, "--config", config)...)
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH"), "CLUSTERCTL_DISABLE_VERSIONCHECK=true"}
	for k, v := range vars {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("clusterctl %s: %w: %s", strings.Join(args, " "), err, stderr.String())
	}
	return out, nil
}

// releaseDir is the release's directory in the suite's repository.
func (f *flow) releaseDir() string {
	f.t.Helper()
	_, dir := clusterctlConfig(f.t, f.env)
	return dir
}

// generateCluster is `clusterctl generate cluster NAME` in the flow's
// namespace from the release's templates (flavor "" is the default),
// against the local environment (where clusterctl looks for the
// ClusterClass a topology names).
func (f *flow) generateCluster(ctx context.Context, name, flavor string, vars map[string]string, flags ...string) []*unstructured.Unstructured {
	f.t.Helper()
	args := append([]string{"generate", "cluster", name, "--infrastructure", "terraform:" + releaseVersion, "--target-namespace", f.ns,
		"--kubeconfig", f.env.Kubeconfig}, flags...)
	if flavor != "" {
		args = append(args, "--flavor", flavor)
	}
	out, err := clusterctl(ctx, f.t, f.env, vars, args...)
	if err != nil {
		f.t.Fatal(err)
	}
	objs, err := decodeYAML(out)
	if err != nil {
		f.t.Fatalf("clusterctl generate cluster printed what is not YAML: %v", err)
	}
	return objs
}

func decodeYAML(data []byte) ([]*unstructured.Unstructured, error) {
	return devenv.DecodeManifests(bytes.NewReader(data), "clusterctl's output")
}

// The release as clusterctl reads it: the provider's components with
// their labels and no variables to set, the identity template, and
// clusterctl's own refusal of a cluster template with a required variable
// unset. The flows default-flavor and clusterclass provision what
// `clusterctl generate cluster` renders.
func TestClusterctlReadsTheRelease(t *testing.T) {
	t.Parallel()
	env := sharedEnv(t)
	ctx := context.Background()
	_, dir := clusterctlConfig(t, env)

	describe, err := clusterctl(ctx, t, env, nil, "generate", "provider", "--infrastructure", "terraform:"+releaseVersion, "--describe")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"terraform", "InfrastructureProvider", releaseVersion, "captf-system"} {
		if !strings.Contains(string(describe), want) {
			t.Errorf("clusterctl generate provider --describe does not say %q:\n%s", want, describe)
		}
	}
	components, err := clusterctl(ctx, t, env, nil, "generate", "provider", "--infrastructure", "terraform:"+releaseVersion)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := decodeYAML(components)
	if err != nil {
		t.Fatal(err)
	}
	crds, manager := 0, false
	for _, o := range objs {
		if o.GetLabels()["cluster.x-k8s.io/provider"] != "infrastructure-terraform" {
			t.Errorf("clusterctl prints %s %s without the provider label", o.GetKind(), o.GetName())
		}
		crds += boolInt(o.GetKind() == "CustomResourceDefinition")
		if o.GetKind() == "Deployment" {
			containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
			manager = slices.ContainsFunc(containers, func(c any) bool {
				return c.(map[string]any)["image"] == release.ImageRepository+":"+releaseVersion
			})
		}
	}
	if crds != 8 || !manager {
		t.Errorf("clusterctl generate provider: %d CRDs, manager image of the release %v; want 8 and true", crds, manager)
	}

	identity, err := clusterctl(ctx, t, env, map[string]string{"TERRAFORM_IDENTITY_NAME": "team-a", "NAMESPACE": "team-a"},
		"generate", "yaml", "--from", filepath.Join(dir, "identity.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if objs, err := decodeYAML(identity); err != nil || len(objs) != 2 || objs[1].GetKind() != "TerraformClusterIdentity" || objs[1].GetName() != "team-a" {
		t.Errorf("clusterctl generate yaml --from identity.yaml: %v\n%s", err, identity)
	}

	_, err = clusterctl(ctx, t, env, map[string]string{"TERRAFORM_IDENTITY_NAME": "team-a", "TERRAFORM_CLUSTER_IMAGE": "registry.example/c:v1"},
		"generate", "cluster", "c1", "--infrastructure", "terraform:"+releaseVersion, "--kubeconfig", env.Kubeconfig, "--kubernetes-version", "v1.34.1",
		"--control-plane-machine-count", "3", "--worker-machine-count", "1")
	if err == nil || !strings.Contains(err.Error(), "TERRAFORM_MACHINE_IMAGE") || !strings.Contains(err.Error(), "not set") {
		t.Errorf("clusterctl generate cluster without TERRAFORM_MACHINE_IMAGE: %v, want clusterctl's error naming it", err)
	}
}

// Each clusterctl variable of the default flavor lands where the operator
// reference says, rendered by the real clusterctl.
func TestClusterctlVariableTargets(t *testing.T) {
	t.Parallel()
	env := sharedEnv(t)
	out, err := clusterctl(context.Background(), t, env, map[string]string{
		"TERRAFORM_IDENTITY_NAME": "id-x", "TERRAFORM_CLUSTER_IMAGE": "registry.example/cluster:v9", "TERRAFORM_MACHINE_IMAGE": "registry.example/machine:v9",
		"POD_CIDR": "10.1.0.0/16", "SERVICE_CIDR": "10.2.0.0/16",
		"TERRAFORM_NODE_STARTUP_TIMEOUT": "11", "TERRAFORM_UNHEALTHY_TIMEOUT": "12",
		"TERRAFORM_CP_NODE_STARTUP_TIMEOUT": "13", "TERRAFORM_CP_UNHEALTHY_TIMEOUT": "14",
	}, "generate", "cluster", "c1", "--infrastructure", "terraform:"+releaseVersion, "--target-namespace", "team-a", "--kubeconfig", env.Kubeconfig,
		"--kubernetes-version", "v1.34.9", "--control-plane-machine-count", "5", "--worker-machine-count", "4")
	if err != nil {
		t.Fatal(err)
	}
	objs, err := decodeYAML(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		object string
		path   []any
		want   any
	}{
		{"Cluster/c1", []any{"spec", "clusterNetwork", "pods", "cidrBlocks", 0}, "10.1.0.0/16"},
		{"Cluster/c1", []any{"spec", "clusterNetwork", "services", "cidrBlocks", 0}, "10.2.0.0/16"},
		{"TerraformCluster/c1", []any{"spec", "source", "image"}, "registry.example/cluster:v9"},
		{"TerraformCluster/c1", []any{"spec", "identityRef", "name"}, "id-x"},
		{"TerraformCluster/c1", []any{"spec", "defaults", "identityRef", "name"}, "id-x"},
		{"KubeadmControlPlane/c1-control-plane", []any{"spec", "replicas"}, int64(5)},
		{"KubeadmControlPlane/c1-control-plane", []any{"spec", "version"}, "v1.34.9"},
		{"TerraformMachineTemplate/c1-control-plane", []any{"spec", "template", "spec", "source", "image"}, "registry.example/machine:v9"},
		{"TerraformMachineTemplate/c1-md-0", []any{"spec", "template", "spec", "source", "image"}, "registry.example/machine:v9"},
		{"MachineDeployment/c1-md-0", []any{"spec", "replicas"}, int64(4)},
		{"MachineDeployment/c1-md-0", []any{"spec", "template", "spec", "version"}, "v1.34.9"},
		{"MachineHealthCheck/c1-md-0", []any{"spec", "checks", "nodeStartupTimeoutSeconds"}, int64(11)},
		{"MachineHealthCheck/c1-md-0", []any{"spec", "checks", "unhealthyMachineConditions", 0, "timeoutSeconds"}, int64(12)},
		{"MachineHealthCheck/c1-control-plane", []any{"spec", "checks", "nodeStartupTimeoutSeconds"}, int64(13)},
		{"MachineHealthCheck/c1-control-plane", []any{"spec", "checks", "unhealthyMachineConditions", 0, "timeoutSeconds"}, int64(14)},
	} {
		i := slices.IndexFunc(objs, func(o *unstructured.Unstructured) bool { return o.GetKind()+"/"+o.GetName() == tc.object })
		if i < 0 {
			t.Errorf("clusterctl rendered no %s", tc.object)
			continue
		}
		if objs[i].GetNamespace() != "team-a" {
			t.Errorf("%s is in namespace %q, want the target namespace", tc.object, objs[i].GetNamespace())
		}
		// Decoded YAML numbers are float64s: compare as printed.
		if got := dig(objs[i].Object, tc.path...); fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s %v = %v (%T), want %v", tc.object, tc.path, got, got, tc.want)
		}
	}
}

// dig reads a field of a decoded object; an int in path indexes a list.
func dig(obj any, path ...any) any {
	for _, p := range path {
		switch p := p.(type) {
		case string:
			m, _ := obj.(map[string]any)
			obj = m[p]
		case int:
			l, _ := obj.([]any)
			if p >= len(l) {
				return nil
			}
			obj = l[p]
		}
	}
	return obj
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
