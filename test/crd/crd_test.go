// Package crd_test proves CAPTF's API through the real kube-apiserver: every
// kind is accepted in its minimal form, and invalid objects and forbidden
// changes are rejected with the offending field named.
package crd_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/test/envtest"
)

var env *envtest.Env

func TestMain(m *testing.M) {
	os.Exit(envtest.Main(m, &env, envtest.Options{}))
}

func TestMinimalObjectOfEveryKindIsAccepted(t *testing.T) {
	envtest.Require(t, env)
	ctx := context.Background()
	for _, obj := range minimalObjects() {
		t.Run(fmt.Sprintf("%T", obj), func(t *testing.T) {
			if err := env.Client.Create(ctx, obj); err != nil {
				t.Fatalf("creating a minimal %T: %v", obj, err)
			}
			t.Cleanup(func() { _ = env.Client.Delete(ctx, obj) })
			if obj.GetUID() == "" {
				t.Fatalf("the API server returned no UID for %T", obj)
			}
		})
	}
}

// rejected expects an Invalid (422) error that names every wanted fragment.
func rejected(t *testing.T, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("the API server accepted the object; want a rejection naming %q", want)
	}
	if !apierrors.IsInvalid(err) {
		t.Fatalf("want an Invalid (422) error, got %v", err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("the error does not name %q:\n%v", w, err)
		}
	}
}

func TestInvalidObjectsAreRejectedNamingTheField(t *testing.T) {
	envtest.Require(t, env)
	testCases := []struct {
		name string
		obj  func() client.Object
		want []string
	}{
		{"cluster without identityRef", func() client.Object {
			c := cluster("no-identity")
			c.Spec.IdentityRef = nil
			return c
		}, []string{"spec.identityRef is required"}},
		{"empty image", func() client.Object {
			c := cluster("empty-image")
			c.Spec.Source.Image = ""
			return c
		}, []string{"spec.source"}},
		{"overlong image", func() client.Object {
			c := cluster("long-image")
			c.Spec.Source.Image = "r/" + longName(520)
			return c
		}, []string{"spec.source.image", "Too long"}},
		{"bad imagePullPolicy", func() client.Object {
			c := cluster("pull-policy")
			c.Spec.Source.ImagePullPolicy = "Sometimes"
			return c
		}, []string{"spec.source.imagePullPolicy", "Unsupported value"}},
		{"bad identityRef kind", func() client.Object {
			c := cluster("identity-kind")
			c.Spec.IdentityRef.Kind = "ConfigMap"
			return c
		}, []string{"spec.identityRef.kind"}},
		{"bad applyPolicy", func() client.Object {
			c := cluster("apply-policy")
			c.Spec.ApplyPolicy = "Whenever"
			return c
		}, []string{"spec.applyPolicy", "Unsupported value"}},
		{"lockTimeoutSeconds above 3600", func() client.Object {
			c := cluster("lock-range")
			c.Spec.Jobs = jobs(ptr.To[int64](7200), ptr.To[int32](3601))
			return c
		}, []string{"spec.jobs.lockTimeoutSeconds"}},
		{"activeDeadlineSeconds 0", func() client.Object {
			c := cluster("deadline-zero")
			c.Spec.Jobs = jobs(ptr.To[int64](0), ptr.To[int32](0))
			return c
		}, []string{"spec.jobs.activeDeadlineSeconds"}},
		{"activeDeadlineSeconds above 86400", func() client.Object {
			c := cluster("deadline-range")
			c.Spec.Jobs = jobs(ptr.To[int64](86401), nil)
			return c
		}, []string{"spec.jobs.activeDeadlineSeconds"}},
		{"lock timeout not below the deadline", func() client.Object {
			c := cluster("lock-deadline")
			c.Spec.Jobs = jobs(ptr.To[int64](300), ptr.To[int32](600))
			return c
		}, []string{"spec.jobs", "lockTimeoutSeconds must be lower than activeDeadlineSeconds"}},
		{"deadline alone not above the default lock timeout", func() client.Object {
			c := cluster("deadline-alone")
			c.Spec.Jobs = jobs(ptr.To[int64](200), nil)
			return c
		}, []string{"spec.jobs", "activeDeadlineSeconds must be greater than the default lockTimeoutSeconds"}},
		{"lock timeout alone not below the default deadline", func() client.Object {
			c := cluster("lock-alone")
			c.Spec.Jobs = jobs(nil, ptr.To[int32](3600))
			return c
		}, []string{"spec.jobs", "lockTimeoutSeconds must be lower than the default activeDeadlineSeconds"}},
		{"machine defaults jobs are checked too", func() client.Object {
			c := cluster("defaults-jobs")
			c.Spec.Defaults = &infrav1.ClusterDefaults{Jobs: jobs(ptr.To[int64](100), ptr.To[int32](100))}
			return c
		}, []string{"spec.defaults.jobs", "lockTimeoutSeconds must be lower than activeDeadlineSeconds"}},
		{"endpoint host without port", func() client.Object {
			c := cluster("half-endpoint")
			c.Spec.ControlPlaneEndpoint = clusterv1.APIEndpoint{Host: "10.0.0.1"}
			return c
		}, []string{"spec.controlPlaneEndpoint", "set host and port together"}},
		{"endpoint port out of range", func() client.Object {
			c := cluster("endpoint-port")
			c.Spec.ControlPlaneEndpoint = clusterv1.APIEndpoint{Host: "10.0.0.1", Port: 70000}
			return c
		}, []string{"spec.controlPlaneEndpoint.port"}},
		{"maxActiveJobs 0", func() client.Object {
			c := cluster("max-jobs")
			c.Spec.MaxActiveJobs = ptr.To[int32](0)
			return c
		}, []string{"spec.maxActiveJobs"}},
		{"bad drift action", func() client.Object {
			c := cluster("drift-action")
			c.Spec.Drift = &infrav1.ClusterDriftSpec{Action: "Ignore"}
			return c
		}, []string{"spec.drift.action", "Unsupported value"}},
		{"membership refresh below 15 seconds in defaults", func() client.Object {
			c := cluster("membership")
			c.Spec.Defaults = &infrav1.ClusterDefaults{MembershipRefreshIntervalSeconds: ptr.To[int32](5)}
			return c
		}, []string{"spec.defaults.membershipRefreshIntervalSeconds"}},
		{"remediation threshold above 100", func() client.Object {
			c := cluster("threshold")
			c.Spec.Defaults = &infrav1.ClusterDefaults{Remediation: &infrav1.RemediationSpec{UnhealthyThreshold: ptr.To[int32](101)}}
			return c
		}, []string{"spec.defaults.remediation.unhealthyThreshold"}},
		{"health check interval below 60 seconds", func() client.Object {
			c := cluster("health-interval")
			c.Spec.Defaults = &infrav1.ClusterDefaults{Remediation: &infrav1.RemediationSpec{HealthCheckIntervalSeconds: ptr.To[int32](30)}}
			return c
		}, []string{"spec.defaults.remediation.healthCheckIntervalSeconds"}},
		{"variables not an object", func() client.Object {
			c := cluster("vars-array")
			c.Spec.Variables = vars(`["a"]`)
			return c
		}, []string{"spec.variables"}},
		{"variables empty object", func() client.Object {
			c := cluster("vars-empty")
			c.Spec.Variables = vars(`{}`)
			return c
		}, []string{"spec.variables"}},
		{"variablesFrom with both references", func() client.Object {
			c := cluster("vars-from-both")
			ref := &infrav1.LocalObjectReference{Name: "x"}
			c.Spec.VariablesFrom = []infrav1.VariablesFromSource{{ConfigMapRef: ref, SecretRef: ref}}
			return c
		}, []string{"spec.variablesFrom[0]", "set exactly one of configMapRef and secretRef"}},
		{"variablesFrom with a bad format", func() client.Object {
			c := cluster("vars-from-format")
			c.Spec.VariablesFrom = []infrav1.VariablesFromSource{{ConfigMapRef: &infrav1.LocalObjectReference{Name: "x"}, Format: "YAML"}}
			return c
		}, []string{"spec.variablesFrom[0].format"}},
		{"more than 64 env entries", func() client.Object {
			c := cluster("env-count")
			c.Spec.Jobs = &infrav1.JobsSpec{}
			for i := range 65 {
				c.Spec.Jobs.Env = append(c.Spec.Jobs.Env, corev1.EnvVar{Name: fmt.Sprintf("V%d", i), Value: "x"})
			}
			return c
		}, []string{"spec.jobs.env", "Too many"}},
		{"bad deletionPolicy", func() client.Object {
			c := cluster("deletion-policy")
			c.Spec.DeletionPolicy = "Orphan"
			return c
		}, []string{"spec.deletionPolicy", "Unsupported value"}},
		{"machine drift interval negative", func() client.Object {
			m := machine("machine-drift")
			m.Spec.Drift = &infrav1.MachineDriftSpec{IntervalSeconds: ptr.To[int32](-1)}
			return m
		}, []string{"spec.drift.intervalSeconds"}},
		{"machine providerID too long", func() client.Object {
			m := machine("machine-provider-id")
			m.Spec.ProviderID = "noop://" + longName(510)
			return m
		}, []string{"spec.providerID", "Too long"}},
		{"pool drift interval 0", func() client.Object {
			p := pool("pool-drift")
			p.Spec.Drift = &infrav1.MachinePoolDriftSpec{IntervalSeconds: ptr.To[int32](0)}
			return p
		}, []string{"spec.drift.intervalSeconds"}},
		{"pool membership refresh below 15 seconds", func() client.Object {
			p := pool("pool-membership")
			p.Spec.MembershipRefreshIntervalSeconds = ptr.To[int32](10)
			return p
		}, []string{"spec.membershipRefreshIntervalSeconds"}},
		{"machine template with a providerID", func() client.Object {
			m := machineTemplate("template-provider-id")
			m.Spec.Template.Spec.ProviderID = "noop://x"
			return m
		}, []string{"spec.template.spec.providerID", "providerID cannot be set on a template"}},
		{"identity with allowedNamespaces {}", func() client.Object {
			i := identity("identity-empty-allowed")
			i.Spec.AllowedNamespaces = &infrav1.AllowedNamespaces{}
			return i
		}, []string{"spec.allowedNamespaces", "write selector: {}"}},
		{"identity without secretRef", func() client.Object {
			i := identity("identity-no-secret")
			i.Spec.SecretRef = infrav1.SecretReference{}
			i.Spec.Type = infrav1.IdentityTypeSecret
			return i
		}, []string{"spec.secretRef"}},
		{"identity secret namespace not a DNS label", func() client.Object {
			i := identity("identity-bad-namespace")
			i.Spec.SecretRef.Namespace = "Bad_Namespace"
			return i
		}, []string{"spec.secretRef.namespace"}},
		{"identity with 101 allowed namespaces", func() client.Object {
			i := identity("identity-many-namespaces")
			i.Spec.AllowedNamespaces = &infrav1.AllowedNamespaces{}
			for n := range 101 {
				i.Spec.AllowedNamespaces.List = append(i.Spec.AllowedNamespaces.List, fmt.Sprintf("ns-%d", n))
			}
			return i
		}, []string{"spec.allowedNamespaces.list", "Too many"}},
		{"identity required key with a space", func() client.Object {
			i := identity("identity-bad-key")
			i.Spec.RequiredKeys = []string{"AWS KEY"}
			return i
		}, []string{"spec.requiredKeys[0]"}},
		{"plan approved without approvedBy", func() client.Object {
			p := plan("plan-no-approver")
			p.Spec.Approved = ptr.To(true)
			return p
		}, []string{"spec.approvedBy", "approvedBy must be set exactly when approved is true"}},
		{"plan for a machine", func() client.Object {
			p := plan("plan-machine-target")
			p.Spec.TargetRef.Kind = "TerraformMachine"
			return p
		}, []string{"spec.targetRef.kind", "Unsupported value"}},
		{"plan with a bad reason", func() client.Object {
			p := plan("plan-reason")
			p.Spec.Reason = "Because"
			return p
		}, []string{"spec.reason", "Unsupported value"}},
		{"plan hash over 128 characters", func() client.Object {
			p := plan("plan-hash-long")
			p.Spec.PlanHash = "p2:" + longName(130)
			return p
		}, []string{"spec.planHash", "Too long"}},
		{"plan summary with 51 resources", func() client.Object {
			p := plan("plan-many-resources")
			p.Spec.Summary.Resources = nil
			for i := range 51 {
				p.Spec.Summary.Resources = append(p.Spec.Summary.Resources, fmt.Sprintf("null_resource.r%d (create)", i))
			}
			return p
		}, []string{"spec.summary.resources", "Too many"}},
	}
	ctx := context.Background()
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			obj := tc.obj()
			err := env.Client.Create(ctx, obj)
			if err == nil {
				_ = env.Client.Delete(ctx, obj)
			}
			rejected(t, err, tc.want...)
		})
	}
}

func TestForbiddenChangesAreRejectedAndAllowedOnesAccepted(t *testing.T) {
	envtest.Require(t, env)
	testCases := []struct {
		name   string
		obj    func() client.Object
		change func(client.Object)
		want   []string // empty: the change must be accepted
	}{
		{"machine source", func() client.Object { return machine("imm-source") },
			func(o client.Object) { o.(*infrav1.TerraformMachine).Spec.Source.Image = "registry.example/other:v2" },
			[]string{"spec.source", "source is immutable"}},
		{"machine identityRef unset to set", func() client.Object { return machine("imm-identity") },
			func(o client.Object) {
				o.(*infrav1.TerraformMachine).Spec.IdentityRef = &infrav1.IdentityReference{Name: "other"}
			},
			[]string{"spec.identityRef", "identityRef is immutable"}},
		{"machine variables", func() client.Object {
			m := machine("imm-variables")
			m.Spec.Variables = vars(`{"size":"small"}`)
			return m
		}, func(o client.Object) { o.(*infrav1.TerraformMachine).Spec.Variables = vars(`{"size":"large"}`) },
			[]string{"spec.variables", "variables are immutable"}},
		{"machine variablesFrom", func() client.Object { return machine("imm-variables-from") },
			func(o client.Object) {
				o.(*infrav1.TerraformMachine).Spec.VariablesFrom = []infrav1.VariablesFromSource{{ConfigMapRef: &infrav1.LocalObjectReference{Name: "v"}}}
			},
			[]string{"spec.variablesFrom", "variablesFrom is immutable"}},
		{"machine providerID changed once set", func() client.Object {
			m := machine("imm-provider-id")
			m.Spec.ProviderID = "noop://a"
			return m
		}, func(o client.Object) { o.(*infrav1.TerraformMachine).Spec.ProviderID = "noop://b" },
			[]string{"spec.providerID", "providerID is immutable once set"}},
		{"machine providerID cleared", func() client.Object {
			m := machine("imm-provider-id-clear")
			m.Spec.ProviderID = "noop://a"
			return m
		}, func(o client.Object) { o.(*infrav1.TerraformMachine).Spec.ProviderID = "" },
			[]string{"spec.providerID", "providerID is immutable once set"}},
		{"machine providerID set from empty", func() client.Object { return machine("mut-provider-id") },
			func(o client.Object) { o.(*infrav1.TerraformMachine).Spec.ProviderID = "noop://a" }, nil},
		{"machine jobs policy", func() client.Object { return machine("mut-jobs") },
			func(o client.Object) {
				o.(*infrav1.TerraformMachine).Spec.Jobs = jobs(ptr.To[int64](7200), ptr.To[int32](60))
			}, nil},
		{"cluster endpoint once set", func() client.Object {
			c := cluster("imm-endpoint")
			c.Spec.ControlPlaneEndpoint = clusterv1.APIEndpoint{Host: "10.0.0.1", Port: 6443}
			return c
		}, func(o client.Object) { o.(*infrav1.TerraformCluster).Spec.ControlPlaneEndpoint.Port = 443 },
			[]string{"spec.controlPlaneEndpoint", "controlPlaneEndpoint is immutable once host and port are set"}},
		{"cluster endpoint set from empty", func() client.Object { return cluster("mut-endpoint") },
			func(o client.Object) {
				o.(*infrav1.TerraformCluster).Spec.ControlPlaneEndpoint = clusterv1.APIEndpoint{Host: "10.0.0.1", Port: 6443}
			}, nil},
		{"cluster identityRef removed", func() client.Object { return cluster("imm-cluster-identity") },
			func(o client.Object) { o.(*infrav1.TerraformCluster).Spec.IdentityRef = nil },
			[]string{"spec.identityRef is required"}},
		{"cluster image", func() client.Object { return cluster("mut-cluster-image") },
			func(o client.Object) { o.(*infrav1.TerraformCluster).Spec.Source.Image = "registry.example/noop:v2" }, nil},
		{"pool variables", func() client.Object { return pool("mut-pool-variables") },
			func(o client.Object) { o.(*infrav1.TerraformMachinePool).Spec.Variables = vars(`{"size":"large"}`) }, nil},
		{"plan approval", func() client.Object { return plan("mut-plan-approve") },
			func(o client.Object) {
				p := o.(*infrav1.TerraformPlan)
				p.Spec.Approved, p.Spec.ApprovedBy = ptr.To(true), "alice"
			}, nil},
		{"plan approval withdrawn", func() client.Object {
			p := plan("imm-plan-withdraw")
			p.Spec.Approved, p.Spec.ApprovedBy = ptr.To(true), "alice"
			return p
		}, func(o client.Object) {
			p := o.(*infrav1.TerraformPlan)
			p.Spec.Approved, p.Spec.ApprovedBy = ptr.To(false), ""
		}, []string{"spec.approved", "an approval cannot be withdrawn or re-attributed"}},
		{"plan approver re-attributed", func() client.Object {
			p := plan("imm-plan-approver")
			p.Spec.Approved, p.Spec.ApprovedBy = ptr.To(true), "alice"
			return p
		}, func(o client.Object) { o.(*infrav1.TerraformPlan).Spec.ApprovedBy = "mallory" },
			[]string{"spec.approved", "an approval cannot be withdrawn or re-attributed"}},
		{"plan hash", func() client.Object { return plan("imm-plan-hash") },
			func(o client.Object) { o.(*infrav1.TerraformPlan).Spec.PlanHash = "p2:ffff" },
			[]string{"spec.planHash", "planHash is immutable"}},
		{"plan summary", func() client.Object { return plan("imm-plan-summary") },
			func(o client.Object) { o.(*infrav1.TerraformPlan).Spec.Summary.Delete = 3 },
			[]string{"spec.summary", "summary is immutable"}},
		{"plan target", func() client.Object { return plan("imm-plan-target") },
			func(o client.Object) { o.(*infrav1.TerraformPlan).Spec.TargetRef.Name = "other" },
			[]string{"spec.targetRef", "targetRef is immutable"}},
		{"identity widening to every namespace", func() client.Object { return identity("mut-identity") },
			func(o client.Object) {
				o.(*infrav1.TerraformClusterIdentity).Spec.AllowedNamespaces = &infrav1.AllowedNamespaces{Selector: &metav1.LabelSelector{}}
			}, nil},
	}
	ctx := context.Background()
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			obj := tc.obj()
			if err := env.Client.Create(ctx, obj); err != nil {
				t.Fatalf("creating the starting object: %v", err)
			}
			t.Cleanup(func() { _ = env.Client.Delete(ctx, obj) })
			tc.change(obj)
			err := env.Client.Update(ctx, obj)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("the change was rejected: %v", err)
				}
				return
			}
			rejected(t, err, tc.want...)
		})
	}
}

func TestCRDsCarryTheClusterAPIContract(t *testing.T) {
	envtest.Require(t, env)
	ctx := context.Background()
	if err := apiextensionsv1.AddToScheme(env.Scheme); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	testCases := []struct {
		plural, short string
		namespaced    bool
		status        bool
		moveLabel     string
		columns       []string
	}{
		{"terraformclusters", "tfc", true, true, infrav1.MoveLabel, []string{"Cluster", "Ready", "Provisioned", "Endpoint", "Operation", "State Size", "Age"}},
		{"terraformmachines", "tfm", true, true, infrav1.MoveLabel, []string{"Cluster", "Machine", "Ready", "Provisioned", "ProviderID", "Operation", "State Size", "Age"}},
		{"terraformmachinepools", "tfmp", true, true, infrav1.MoveLabel, []string{"Cluster", "MachinePool", "Replicas", "Ready", "Provisioned", "Operation", "State Size", "Age"}},
		{"terraformclustertemplates", "tfct", true, false, infrav1.MoveLabel, []string{"Image", "Age"}},
		{"terraformmachinetemplates", "tfmt", true, true, infrav1.MoveLabel, []string{"Image", "Age"}},
		{"terraformmachinepooltemplates", "tfmpt", true, false, infrav1.MoveLabel, []string{"Image", "Age"}},
		{"terraformclusteridentities", "", false, true, infrav1.MoveHierarchyLabel, []string{"Secret", "Namespace", "Ready", "Age"}},
		{"terraformplans", "tfplan", true, true, infrav1.MoveLabel, []string{"Target", "Reason", "Phase", "Create", "Update", "Replace", "Delete", "Approved", "Age"}},
	}
	for _, tc := range testCases {
		t.Run(tc.plural, func(t *testing.T) {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := c.Get(ctx, client.ObjectKey{Name: tc.plural + "." + infrav1.GroupVersion.Group}, crd); err != nil {
				t.Fatal(err)
			}
			if got := crd.Labels[infrav1.ContractVersionLabel]; got != "v1alpha1" {
				t.Errorf("label %s = %q, want v1alpha1", infrav1.ContractVersionLabel, got)
			}
			if _, ok := crd.Labels[tc.moveLabel]; !ok {
				t.Errorf("missing clusterctl label %s", tc.moveLabel)
			}
			if !contains(crd.Spec.Names.Categories, "cluster-api") {
				t.Errorf("categories %v lack cluster-api", crd.Spec.Names.Categories)
			}
			if tc.short != "" && !contains(crd.Spec.Names.ShortNames, tc.short) {
				t.Errorf("short names %v lack %s", crd.Spec.Names.ShortNames, tc.short)
			}
			if got := crd.Spec.Scope == apiextensionsv1.NamespaceScoped; got != tc.namespaced {
				t.Errorf("scope %s", crd.Spec.Scope)
			}
			v := crd.Spec.Versions[0]
			if v.Name != "v1alpha1" || !v.Storage || !v.Served {
				t.Errorf("version %s storage=%v served=%v", v.Name, v.Storage, v.Served)
			}
			if got := v.Subresources != nil && v.Subresources.Status != nil; got != tc.status {
				t.Errorf("status subresource = %v, want %v", got, tc.status)
			}
			var cols []string
			for _, col := range v.AdditionalPrinterColumns {
				if col.Priority == 0 {
					cols = append(cols, col.Name)
				}
			}
			if strings.Join(cols, ",") != strings.Join(tc.columns, ",") {
				t.Errorf("printer columns %v, want %v", cols, tc.columns)
			}
			if path := defaultAt(v.Schema.OpenAPIV3Schema, ""); path != "" {
				t.Errorf("the schema declares a default at %s; CAPTF resolves defaults at reconcile time", path)
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// coreTypes are fields embedding Kubernetes core types, whose own schema
// carries the core API's defaults (for example an EnvVar's
// configMapKeyRef.name ""). CAPTF's fields declare none.
var coreTypes = map[string]bool{"env": true, "resources": true, "securityContext": true, "podSecurityContext": true, "imagePullSecrets": true}

// defaultAt returns the path of the first default declared outside
// embedded core types, or "".
func defaultAt(s *apiextensionsv1.JSONSchemaProps, path string) string {
	if s == nil {
		return ""
	}
	if s.Default != nil {
		return path
	}
	for name, p := range s.Properties {
		if coreTypes[name] {
			continue
		}
		if found := defaultAt(&p, path+"."+name); found != "" {
			return found
		}
	}
	if s.Items != nil {
		if found := defaultAt(s.Items.Schema, path+"[]"); found != "" {
			return found
		}
	}
	if s.AdditionalProperties != nil {
		return defaultAt(s.AdditionalProperties.Schema, path+"{}")
	}
	return ""
}
