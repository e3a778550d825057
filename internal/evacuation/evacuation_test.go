package evacuation_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/evacuation"
	"captf.io/captf/internal/protection"
	"captf.io/captf/internal/test/envtest"
	"captf.io/captf/pkg/state"
)

// env runs the real control plane with its namespace controller: the
// copy back is proven against a namespace Kubernetes really terminates.
var env *envtest.Env

func TestMain(m *testing.M) {
	os.Exit(envtest.Main(m, &env, envtest.Options{ControllerManager: true}))
}

const suffix = "default-m-a1b2c3"

func piece(ns, name, data string) *corev1.Secret {
	labels := state.PieceLabels(suffix)
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels, Finalizers: []string{protection.Finalizer},
			Annotations: map[string]string{infrav1.InputsHashAnnotation: "h3:" + data}},
		Data: map[string][]byte{"tfstate": []byte(data)},
	}
}

func mustCreate(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := env.Client.Create(t.Context(), o); err != nil {
			t.Fatalf("creating %s: %v", o.GetName(), err)
		}
	}
}

// contents reads the state pieces of ns as name -> data.
func contents(t *testing.T, ns string) map[string]string {
	t.Helper()
	var list corev1.SecretList
	if err := env.Client.List(t.Context(), &list, client.InNamespace(ns), client.MatchingLabelsSelector{Selector: state.Selector(suffix)}); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, s := range list.Items {
		if s.DeletionTimestamp == nil {
			out[s.Name] = string(s.Data["tfstate"]) + "|" + s.Annotations[infrav1.InputsHashAnnotation]
		}
	}
	return out
}

func equal(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// releaseAll lets a terminating test namespace go.
func releaseAll(ctx context.Context, ns string) {
	var list corev1.SecretList
	if err := env.Client.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return
	}
	for i := range list.Items {
		_ = protection.Release(ctx, env.Client, &list.Items[i])
	}
}

// The destroy's round trip: the state is copied into the evacuation
// namespace, the Job there shrinks it, and the copy back reaches the
// terminating namespace, which refuses any piece it does not already
// have: nothing is written then.
func TestStateRoundTripThroughATerminatingNamespace(t *testing.T) {
	ctx := t.Context()
	home := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "home-", Labels: map[string]string{"pod-security.kubernetes.io/enforce": "baseline"}}}
	mustCreate(t, home)
	t.Cleanup(func() { releaseAll(context.Background(), home.Name) })
	base, part := "tfstate-default-"+suffix, "tfstate-default-"+suffix+"-part-1"
	mustCreate(t, piece(home.Name, base, "serial-7"), piece(home.Name, part, "serial-7-tail"))

	obj := machine(t, home.Name)
	evac, msg, err := evacuation.Ensure(ctx, env.Client, env.Client, "TerraformMachine", obj)
	if err != nil || msg != "" {
		t.Fatalf("Ensure: %v %q", err, msg)
	}
	t.Cleanup(func() { _ = evacuation.Remove(context.Background(), env.Client, env.Client, obj) })
	if !evacuation.IsName(evac.Name) || evac.Labels["pod-security.kubernetes.io/enforce"] != "baseline" || evac.Labels[infrav1.EvacuatedFromUIDLabel] != string(obj.UID) {
		t.Errorf("evacuation namespace %s labels %v", evac.Name, evac.Labels)
	}
	stored := &infrav1.TerraformMachine{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), stored); err != nil || stored.Annotations[infrav1.EvacuationNamespaceAnnotation] != evac.Name+"/"+string(evac.UID) {
		t.Fatalf("the object records %q (%v), want %s/%s", stored.Annotations[infrav1.EvacuationNamespaceAnnotation], err, evac.Name, evac.UID)
	}
	if again, msg, err := evacuation.Ensure(ctx, env.Client, env.Client, "TerraformMachine", stored); err != nil || msg != "" || again.UID != evac.UID {
		t.Fatalf("a second Ensure: %v %q, same namespace %v", err, msg, again != nil && again.UID == evac.UID)
	}

	if err := evacuation.Evacuate(ctx, env.Client, env.Client, home.Name, evac, suffix); err != nil {
		t.Fatalf("evacuating: %v", err)
	}
	if in, out := contents(t, home.Name), contents(t, evac.Name); !equal(in, out) {
		t.Fatalf("the copy %v differs from the state %v", out, in)
	}
	if !stateCopied(t, evac.Name) {
		t.Fatalf("the evacuation namespace does not say its copy is whole")
	}
	if changed, err := evacuation.CopyIn(ctx, env.Client, env.Client, home.Name, evac.Name, suffix); err != nil || changed {
		t.Fatalf("copying in again wrote: changed %v, %v", changed, err)
	}
	copied := &corev1.Secret{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: evac.Name, Name: base}, copied); err != nil || !protection.Protected(copied) {
		t.Fatalf("the copy of %s is not kept by the state protection (%v): a deletion there would lose it", base, err)
	}

	// The namespace terminates; its protected pieces stay.
	if err := env.Client.Delete(ctx, home); err != nil {
		t.Fatal(err)
	}
	refused := piece(home.Name, "probe", "x")
	deadline := time.Now().Add(time.Minute)
	for err := env.Client.Create(ctx, refused); !apierrors.IsForbidden(err); err = env.Client.Create(ctx, refused) {
		if err == nil {
			_ = protection.Delete(ctx, env.Client, refused)
			refused = piece(home.Name, "probe", "x")
		}
		if time.Now().After(deadline) {
			t.Fatalf("the namespace still takes new Secrets: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}

	// The destroy in the evacuation namespace shrank the state to one piece.
	shrunk := &corev1.Secret{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: evac.Name, Name: base}, shrunk); err != nil {
		t.Fatal(err)
	}
	shrunk.Data["tfstate"], shrunk.Annotations[infrav1.InputsHashAnnotation] = []byte("serial-9-empty"), "h3:serial-9"
	if err := env.Client.Update(ctx, shrunk); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: evac.Name, Name: part}}); err != nil {
		t.Fatal(err)
	}
	// A piece the terminating namespace lacks: nothing is copied back.
	grown := piece(evac.Name, "tfstate-default-"+suffix+"-part-2", "tail")
	mustCreate(t, grown)
	before := contents(t, home.Name)
	if _, err := evacuation.CopyBack(ctx, env.Client, env.Client, evac.Name, home.Name, suffix); !errors.Is(err, evacuation.ErrCannotGrow) {
		t.Fatalf("copying back a grown state: %v, want ErrCannotGrow", err)
	}
	if after := contents(t, home.Name); !equal(before, after) {
		t.Fatalf("a refused copy back wrote: %v, was %v", after, before)
	}
	if err := protection.Delete(ctx, env.Client, grown); err != nil {
		t.Fatal(err)
	}
	if changed, err := evacuation.CopyBack(ctx, env.Client, env.Client, evac.Name, home.Name, suffix); err != nil || !changed {
		t.Fatalf("copying back: changed %v, %v", changed, err)
	}
	want := map[string]string{base: "serial-9-empty|h3:serial-9"}
	if got := contents(t, home.Name); !equal(got, want) {
		t.Fatalf("the terminating namespace holds %v, want %v", got, want)
	}
	// A copy lost in the evacuation namespace is never copied back as an
	// empty state.
	if err := evacuation.Release(ctx, env.Client, env.Client, evac.Name); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: evac.Name, Name: base}}); err != nil {
		t.Fatal(err)
	}
	if _, err := evacuation.CopyBack(ctx, env.Client, env.Client, evac.Name, home.Name, suffix); !errors.Is(err, evacuation.ErrNoBase) {
		t.Fatalf("copying back a lost copy: %v, want ErrNoBase", err)
	}
	if got := contents(t, home.Name); !equal(got, want) {
		t.Fatalf("a lost copy was copied back: %v, want %v", got, want)
	}
	// The lost copy is abandoned, what is left of it released: the next
	// Job copies the state in again.
	leftover := piece(evac.Name, "tfstate-default-"+suffix+"-part-3", "leftover")
	mustCreate(t, leftover)
	if err := evacuation.Abandon(ctx, env.Client, env.Client, evac); err != nil {
		t.Fatal(err)
	}
	if stateCopied(t, evac.Name) {
		t.Errorf("the evacuation namespace still says its abandoned copy is whole")
	}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(leftover), leftover); err != nil || protection.Protected(leftover) {
		t.Errorf("the abandoned copy's piece is still protected (%v): the evacuation namespace could not finish deleting", err)
	}
}

// stateCopied: the namespace ns says its state copy is whole.
func stateCopied(t *testing.T, ns string) bool {
	t.Helper()
	got := &corev1.Namespace{}
	if err := env.Client.Get(t.Context(), client.ObjectKey{Name: ns}, got); err != nil {
		t.Fatal(err)
	}
	return got.Annotations[evacuation.StateCopiedAnnotation] == "true"
}

// TestHomePodRuns: a pod of the object that has not finished in its home
// namespace holds an evacuated Job, named in the message; a finished one,
// or another object's, does not.
func TestHomePodRuns(t *testing.T) {
	ctx := t.Context()
	home := envtest.Namespace(t, env.Client, "home-pods")
	mine := state.OwnerSelector("TerraformMachine", "m-0")
	pod := func(name string, labels map[string]string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: home, Name: name, Labels: labels},
			Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "runner"}}}}
		mustCreate(t, p)
		return p
	}
	pod("other-0", state.OwnerSelector("TerraformMachine", "m-1"))
	if why, err := evacuation.HomePodRuns(ctx, env.Client, home, mine); err != nil || why != "" {
		t.Fatalf("with another object's pod only: %q, %v; want nothing held", why, err)
	}
	running := pod("m-0-destroy-a1", mine)
	why, err := evacuation.HomePodRuns(ctx, env.Client, home, mine)
	if err != nil || !strings.Contains(why, running.Name) || !strings.Contains(why, home) {
		t.Fatalf("with its pod pending: %q, %v; want the pod and namespace named", why, err)
	}
	for _, phase := range []corev1.PodPhase{corev1.PodFailed, corev1.PodSucceeded} {
		running.Status.Phase = phase
		if err := env.Client.Status().Update(ctx, running); err != nil {
			t.Fatal(err)
		}
		if why, err := evacuation.HomePodRuns(ctx, env.Client, home, mine); err != nil || why != "" {
			t.Errorf("with its pod %s: %q, %v; want nothing held", phase, why, err)
		}
	}
}

// machine creates a TerraformMachine in ns.
func machine(t *testing.T, ns string) *infrav1.TerraformMachine {
	t.Helper()
	m := &infrav1.TerraformMachine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "m-"},
		Spec: infrav1.TerraformMachineSpec{Source: infrav1.SourceSpec{Image: "local/noop-machine:tofu"}}}
	mustCreate(t, m)
	return m
}

// A namespace of the recorded name that CAPTF did not create (another
// UID, or created before CAPTF recorded one) is never used nor deleted.
func TestForeignNamespaceIsLeftAlone(t *testing.T) {
	ctx := t.Context()
	home := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "home-"}}
	mustCreate(t, home)
	obj := machine(t, home.Name)
	foreign := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: evacuation.Prefix + "taken-" + string(obj.UID)[:8],
		Labels: map[string]string{infrav1.EvacuatedFromUIDLabel: string(obj.UID)}}}
	mustCreate(t, foreign)
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), foreign) })
	for _, recorded := range []string{foreign.Name, foreign.Name + "/" + string(uuid.NewUUID())} {
		obj.Annotations = map[string]string{infrav1.EvacuationNamespaceAnnotation: recorded}
		if err := env.Client.Update(ctx, obj); err != nil {
			t.Fatal(err)
		}
		if found, err := evacuation.Find(ctx, env.Client, obj); err != nil || found != nil {
			t.Fatalf("recorded %q: found %v, %v", recorded, found, err)
		}
		if err := evacuation.Remove(ctx, env.Client, env.Client, obj); err != nil {
			t.Fatal(err)
		}
	}
	ns, msg, err := evacuation.Ensure(ctx, env.Client, env.Client, "TerraformMachine", obj)
	if err != nil || msg != "" || ns.Name == foreign.Name {
		t.Fatalf("Ensure over a foreign namespace: %v, %v, %q", ns, err, msg)
	}
	if found, err := evacuation.CopySecret(ctx, env.Client, env.Client, home.Name, ns.Name, "no-such-secret"); err != nil || found {
		t.Fatalf("copying a missing Secret: found %v, %v", found, err)
	}
	if err := evacuation.Remove(ctx, env.Client, env.Client, obj); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(ns), ns); err == nil && ns.DeletionTimestamp == nil {
		t.Fatal("Remove left the evacuation namespace")
	}
	if _, msg, err := evacuation.Ensure(ctx, env.Client, env.Client, "TerraformMachine", obj); err == nil && msg == "" && !apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(ns), ns)) {
		t.Error("Ensure used an evacuation namespace being deleted")
	}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(foreign), foreign); err != nil || foreign.DeletionTimestamp != nil {
		t.Fatalf("the foreign namespace was deleted: %v", err)
	}
}

// TestCopySecrets: the Secrets a destroy's pod reads are copied each once;
// a needed one that is gone is named, and nothing after it is copied; an
// optional one that is gone is skipped.
func TestCopySecrets(t *testing.T) {
	ctx := t.Context()
	home := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "home-"}}
	to := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "to-"}}
	mustCreate(t, home, to)
	secret := func(name string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: home.Name, Name: name}, Data: map[string][]byte{"k": []byte(name)}}
	}
	mustCreate(t, secret("creds"), secret("pull"))
	copied := func(name string) bool {
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: to.Name, Name: name}, &corev1.Secret{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		return err == nil
	}
	gone, err := evacuation.CopySecrets(ctx, env.Client, env.Client, home.Name, to.Name, []string{"creds", "gone-env"}, []string{"pull", "creds"})
	if err != nil || gone != "gone-env" {
		t.Fatalf("CopySecrets = %q, %v; want the needed gone-env named", gone, err)
	}
	if !copied("creds") || copied("pull") {
		t.Errorf("copied creds %v, pull %v; want creds only (pull sorts after the gone one)", copied("creds"), copied("pull"))
	}
	gone, err = evacuation.CopySecrets(ctx, env.Client, env.Client, home.Name, to.Name, []string{"creds"}, []string{"pull", "gone-pull"})
	if err != nil || gone != "" || !copied("pull") {
		t.Errorf("CopySecrets = %q, %v, pull copied %v; want nothing missing and pull copied", gone, err, copied("pull"))
	}
}
