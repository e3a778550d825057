package config_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/test/envtest"
	"captf.io/captf/internal/test/kustomizetest"
)

// managerPod is what config/default runs: the pod template's labels and
// its manager container's ports by name.
type managerPod struct {
	labels labels.Set
	ports  map[string]int32
}

func renderedManager(t *testing.T, objs []*unstructured.Unstructured) managerPod {
	t.Helper()
	dep := kustomizetest.Find(t, objs, "Deployment", "captf-controller-manager")
	podLabels, _, _ := unstructured.NestedStringMap(dep.Object, "spec", "template", "metadata", "labels")
	m := managerPod{labels: podLabels, ports: map[string]int32{}}
	containers, _, _ := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "containers")
	for _, c := range containers {
		var ctr corev1.Container
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(c.(map[string]any), &ctr); err != nil {
			t.Fatal(err)
		}
		if ctr.Name != "manager" {
			continue
		}
		for _, p := range ctr.Ports {
			m.ports[p.Name] = p.ContainerPort
		}
	}
	return m
}

func convert[T any](t *testing.T, o *unstructured.Unstructured) *T {
	t.Helper()
	out := new(T)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// config/prometheus, used as a component beside config/default: its
// Service selects the manager pods and their metrics port, its
// ServiceMonitor selects that Service only and scrapes it over HTTPS with
// Prometheus's token, its role allows exactly the scrape and binds the
// documented ServiceAccount, and everything but the operator's kinds
// applies to a real API server.
func TestPrometheusComponent(t *testing.T) {
	envtest.Require(t, env)
	objs := kustomizetest.Build(t, []string{"config/default"}, []string{"config/prometheus"})
	mgr := renderedManager(t, objs)

	svc := convert[corev1.Service](t, kustomizetest.Find(t, objs, "Service", "captf-controller-manager-metrics"))
	if svc.Namespace != "captf-system" || !labels.SelectorFromSet(svc.Spec.Selector).Matches(mgr.labels) {
		t.Errorf("Service %s/%s selects %v, not the manager pods %v", svc.Namespace, svc.Name, svc.Spec.Selector, mgr.labels)
	}
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Name != "metrics" || svc.Spec.Ports[0].Port != 8443 ||
		svc.Spec.Ports[0].TargetPort.StrVal != "metrics" || mgr.ports["metrics"] != 8443 {
		t.Errorf("Service ports %+v, manager ports %v: want port 8443 named metrics to the container's metrics port 8443", svc.Spec.Ports, mgr.ports)
	}

	sm := kustomizetest.Find(t, objs, "ServiceMonitor", "captf-controller-manager-metrics")
	match, _, _ := unstructured.NestedStringMap(sm.Object, "spec", "selector", "matchLabels")
	if !labels.SelectorFromSet(match).Matches(labels.Set(svc.Labels)) {
		t.Errorf("the ServiceMonitor selects %v, not the metrics Service's labels %v", match, svc.Labels)
	}
	webhook := kustomizetest.Find(t, objs, "Service", "captf-webhook-service")
	if labels.SelectorFromSet(match).Matches(labels.Set(webhook.GetLabels())) {
		t.Errorf("the ServiceMonitor also selects the webhook Service")
	}
	endpoints, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
	if len(endpoints) != 1 {
		t.Fatalf("the ServiceMonitor has %d endpoints, want 1", len(endpoints))
	}
	ep := endpoints[0].(map[string]any)
	skip, _, _ := unstructured.NestedBool(ep, "tlsConfig", "insecureSkipVerify")
	if ep["port"] != "metrics" || ep["scheme"] != "https" || ep["path"] != "/metrics" || !skip ||
		ep["bearerTokenFile"] != "/var/run/secrets/kubernetes.io/serviceaccount/token" {
		t.Errorf("the ServiceMonitor endpoint %v: want port metrics, https, /metrics, insecureSkipVerify and Prometheus's token", ep)
	}

	role := convert[rbacv1.ClusterRole](t, kustomizetest.Find(t, objs, "ClusterRole", "captf-metrics-reader"))
	want := []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}}
	if len(role.Rules) != 1 || !slices.Equal(role.Rules[0].NonResourceURLs, want[0].NonResourceURLs) || !slices.Equal(role.Rules[0].Verbs, want[0].Verbs) ||
		len(role.Rules[0].Resources) != 0 {
		t.Errorf("captf-metrics-reader rules %+v, want exactly get on /metrics", role.Rules)
	}
	binding := convert[rbacv1.ClusterRoleBinding](t, kustomizetest.Find(t, objs, "ClusterRoleBinding", "captf-metrics-reader"))
	if binding.RoleRef.Name != "captf-metrics-reader" || len(binding.Subjects) != 1 ||
		binding.Subjects[0] != (rbacv1.Subject{Kind: "ServiceAccount", Name: "prometheus-k8s", Namespace: "monitoring"}) {
		t.Errorf("captf-metrics-reader binds %+v to %s, want monitoring/prometheus-k8s", binding.Subjects, binding.RoleRef.Name)
	}
	kustomizetest.Find(t, objs, "PrometheusRule", "captf-alerts")

	apply(context.Background(), t, objs)
}

// config/network-policy, used as a component beside config/default: the
// policy selects the manager pods, lets in exactly their ports and lets
// out DNS and the API server's ports; the Job sample selects the pods of
// CAPTF's Jobs and applies once given a namespace.
func TestNetworkPolicyComponent(t *testing.T) {
	envtest.Require(t, env)
	objs := kustomizetest.Build(t, []string{"config/default"}, []string{"config/network-policy"})
	mgr := renderedManager(t, objs)
	np := convert[networkingv1.NetworkPolicy](t, kustomizetest.Find(t, objs, "NetworkPolicy", "captf-controller-manager"))
	sel, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
	if err != nil || np.Namespace != "captf-system" || !sel.Matches(mgr.labels) {
		t.Errorf("the NetworkPolicy %s/%s selects %v, not the manager pods %v (%v)", np.Namespace, np.Name, np.Spec.PodSelector, mgr.labels, err)
	}
	var in []int32
	for _, rule := range np.Spec.Ingress {
		for _, p := range rule.Ports {
			in = append(in, p.Port.IntVal)
		}
	}
	var served []int32
	for _, p := range mgr.ports {
		served = append(served, p)
	}
	slices.Sort(in)
	slices.Sort(served)
	if !slices.Equal(in, served) {
		t.Errorf("ingress ports %v, want the manager's ports %v", in, served)
	}
	var out []string
	for _, rule := range np.Spec.Egress {
		if len(rule.To) != 0 {
			t.Errorf("egress rule %+v names destinations: the API server's address is the user's to add", rule)
		}
		for _, p := range rule.Ports {
			out = append(out, string(*p.Protocol)+"/"+p.Port.String())
		}
	}
	slices.Sort(out)
	if want := []string{"TCP/443", "TCP/53", "TCP/6443", "UDP/53"}; !slices.Equal(out, want) {
		t.Errorf("egress %v, want %v", out, want)
	}
	apply(context.Background(), t, objs)

	data, err := os.ReadFile(filepath.Join("..", "..", "config", "network-policy", "job-egress-sample.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	sample := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(data, &sample.Object); err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if o.GetName() == sample.GetName() {
			t.Errorf("the component renders the Job sample %s %s", o.GetKind(), o.GetName())
		}
	}
	jobSample := convert[networkingv1.NetworkPolicy](t, sample)
	jobSel, err := metav1.LabelSelectorAsSelector(&jobSample.Spec.PodSelector)
	if err != nil {
		t.Fatal(err)
	}
	jobPod := labels.Set{infrav1.ManagedLabel: "true", infrav1.OperationLabel: "apply"}
	state := labels.Set{infrav1.ManagedLabel: "true"}
	if !jobSel.Matches(jobPod) || jobSel.Matches(state) || jobSel.Matches(mgr.labels) {
		t.Errorf("the Job sample selects %v: want a Job's pod (%v), not other CAPTF objects (%v) nor the manager", jobSel, jobPod, state)
	}
	// As shipped it names no namespace and no API server: applying it
	// unedited fails, naming what to set.
	for _, rule := range jobSample.Spec.Egress {
		for _, p := range rule.Ports {
			if p.Port.IntValue() != 53 && len(rule.To) == 0 {
				t.Errorf("the Job sample lets port %s out to anywhere: the cloud's endpoints are the user's to add", p.Port.String())
			}
		}
	}
	err = env.Client.Create(context.Background(), sample.DeepCopy())
	if err == nil || !strings.Contains(err.Error(), "metadata.namespace") && !strings.Contains(err.Error(), "REPLACE") {
		t.Errorf("the unedited Job sample applied (%v); want it refused until its namespace is set", err)
	}
	sample.SetNamespace("default")
	setAPIServer(t, sample, "10.0.0.1/32")
	apply(context.Background(), t, []*unstructured.Unstructured{sample})
}

// setAPIServer replaces the Job sample's API server placeholder with cidr,
// as its comment tells users to.
func setAPIServer(t *testing.T, sample *unstructured.Unstructured, cidr string) {
	t.Helper()
	egress, _, _ := unstructured.NestedSlice(sample.Object, "spec", "egress")
	set := false
	for _, r := range egress {
		targets, _ := r.(map[string]any)["to"].([]any)
		for _, to := range targets {
			if block, ok := to.(map[string]any)["ipBlock"].(map[string]any); ok && block["cidr"] == "REPLACE-WITH-THE-API-SERVER-CIDR" {
				block["cidr"], set = cidr, true
			}
		}
	}
	if !set {
		t.Fatal("the Job sample has no API server placeholder to set")
	}
	if err := unstructured.SetNestedSlice(sample.Object, egress, "spec", "egress"); err != nil {
		t.Fatal(err)
	}
}
