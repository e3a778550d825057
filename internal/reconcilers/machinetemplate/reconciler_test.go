package machinetemplate_test

import (
	"encoding/base64"
	"os"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/imagemeta"
	"captf.io/captf/internal/reconcilers/machinetemplate"
	"captf.io/captf/internal/test/envtest"
	"captf.io/captf/internal/test/registrytest"
)

var env *envtest.Env

func TestMain(m *testing.M) {
	os.Exit(envtest.Main(m, &env, envtest.Options{}))
}

const user, password = "puller", "pull-token-5e1f"

// A template of a private image, read with its own image pull Secret:
// the capacity and nodeInfo the autoscaler reads, the variables checked
// against the image's schema without quoting a value, an event; then a
// spec.capacity that replaces the label wholesale.
func TestTemplateCapacityFromAPrivateImage(t *testing.T) {
	envtest.Require(t, env)
	ctx := ctrl.LoggerInto(t.Context(), ctrl.Log)
	host := registrytest.Start(t, user, password)
	img := registrytest.Push(t, host+"/captf/noop-machine:1", map[string]string{
		imagemeta.LabelRuntime:               "tofu",
		machinetemplate.LabelCapacity:        `{"cpu":"4","memory":"16Gi"}`,
		machinetemplate.LabelNodeInfo:        `{"architecture":"amd64","operatingSystem":"linux"}`,
		machinetemplate.LabelVariablesSchema: `{"type":"object","properties":{"size":{"type":"string","pattern":"^(small|large)$"}}}`,
	}, &authn.Basic{Username: user, Password: password})
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "tmt-"}}
	if err := env.Client.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	auth := base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
	pull := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "pull"}, Type: corev1.SecretTypeDockerConfigJson,
		Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":{"` + host + `":{"auth":"` + auth + `"}}}`)}}
	if err := env.Client.Create(ctx, pull); err != nil {
		t.Fatal(err)
	}
	tmt := &infrav1.TerraformMachineTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "workers"},
		Spec: infrav1.TerraformMachineTemplateSpec{Template: infrav1.TerraformMachineTemplateResource{Spec: infrav1.TerraformMachineSpec{
			Source:    infrav1.SourceSpec{Image: img},
			Variables: &apiextensionsv1.JSON{Raw: []byte(`{"size":"medium-secret-sizing-7f3a"}`)},
			Jobs:      &infrav1.JobsSpec{ImagePullSecrets: []corev1.LocalObjectReference{{Name: "pull"}}},
		}}}}
	if err := env.Client.Create(ctx, tmt); err != nil {
		t.Fatal(err)
	}
	rec := events.NewFakeRecorder(10)
	r := &machinetemplate.Reconciler{Client: env.Client, APIReader: env.Client, Images: imagemeta.Registry{}, Recorder: rec}
	reconcile := func() ctrl.Result {
		t.Helper()
		res, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(tmt)})
		if err != nil {
			t.Fatal(err)
		}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(tmt), tmt); err != nil {
			t.Fatal(err)
		}
		return res
	}
	reconcile()
	st := tmt.Status
	if st.Capacity.Cpu().Cmp(resource.MustParse("4")) != 0 || st.Capacity.Memory().Cmp(resource.MustParse("16Gi")) != 0 ||
		st.NodeInfo == nil || st.NodeInfo.Architecture != "amd64" || st.CapacitySource == nil || st.CapacitySource.Source != "Image" || st.CapacitySource.Image != img {
		t.Fatalf("status %+v; want the image's capacity and nodeInfo", st)
	}
	c := meta.FindStatusCondition(st.Conditions, infrav1.CapacityResolvedCondition)
	v := meta.FindStatusCondition(st.Conditions, infrav1.VariablesValidCondition)
	if c == nil || c.Status != "True" || v == nil || v.Reason != infrav1.VariablesRejectedReason || !strings.Contains(v.Message, "variable size") {
		t.Fatalf("conditions %+v %+v", c, v)
	}
	if strings.Contains(v.Message, "medium-secret-sizing-7f3a") {
		t.Errorf("VariablesRejected quotes the value: %s", v.Message)
	}
	if ev := <-rec.Events; !strings.Contains(ev, "CapacityResolved") {
		t.Errorf("event %q, want CapacityResolved", ev)
	}

	tmt.Spec.Capacity = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8")}
	if err := env.Client.Update(ctx, tmt); err != nil {
		t.Fatal(err)
	}
	reconcile()
	st = tmt.Status
	if len(st.Capacity) != 1 || st.Capacity.Cpu().Cmp(resource.MustParse("8")) != 0 || st.CapacitySource.Source != "Spec" || st.NodeInfo == nil {
		t.Fatalf("status %+v; want spec.capacity wholesale, the image's nodeInfo", st)
	}
}
