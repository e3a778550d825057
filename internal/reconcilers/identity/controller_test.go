package identity_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/credentials"
	"captf.io/captf/internal/reconcilers/identity"
	"captf.io/captf/internal/test/envtest"
)

var env *envtest.Env

const credValue = "cred-value-7f3a9c-do-not-leak"

var (
	mu       sync.Mutex
	captured []string
)

func capture(s string) {
	mu.Lock()
	defer mu.Unlock()
	captured = append(captured, s)
}

func TestMain(m *testing.M) {
	code := envtest.Main(m, &env, envtest.Options{})
	mu.Lock()
	all := strings.Join(captured, "\n")
	mu.Unlock()
	if code == 0 && env != nil && strings.Contains(all, credValue) {
		fmt.Fprintf(os.Stderr, "FAIL: the credential value leaked into a log line, event or status:\n%s\n", all)
		code = 1
	}
	os.Exit(code)
}

func testContext(t *testing.T) context.Context {
	return ctrl.LoggerInto(t.Context(), funcr.New(func(prefix, args string) { capture(prefix + " " + args) }, funcr.Options{Verbosity: 10}))
}

func namespace(t *testing.T, prefix string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}}
	if err := env.Client.Create(t.Context(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

type harness struct {
	t        *testing.T
	r        *identity.Reconciler
	recorder *events.FakeRecorder
	id       *infrav1.TerraformClusterIdentity
	events   []string
}

// reconcile runs one pass and returns the identity as stored.
func (h *harness) reconcile(wantRequeue time.Duration) *infrav1.TerraformClusterIdentity {
	h.t.Helper()
	res, err := h.r.Reconcile(testContext(h.t), ctrl.Request{NamespacedName: client.ObjectKey{Name: h.id.Name}})
	if err != nil {
		h.t.Fatalf("Reconcile: %v", err)
	}
	if res.RequeueAfter != wantRequeue {
		h.t.Errorf("requeue after %s, want %s", res.RequeueAfter, wantRequeue)
	}
	got := &infrav1.TerraformClusterIdentity{}
	if err := env.Client.Get(h.t.Context(), client.ObjectKey{Name: h.id.Name}, got); err != nil {
		h.t.Fatal(err)
	}
	capture(fmt.Sprintf("%+v", got.Status))
	for {
		select {
		case e := <-h.recorder.Events:
			capture(e)
			h.events = append(h.events, e)
			continue
		default:
		}
		break
	}
	return got
}

func expectReady(t *testing.T, id *infrav1.TerraformClusterIdentity, status metav1.ConditionStatus, reason, says string) {
	t.Helper()
	c := meta.FindStatusCondition(id.Status.Conditions, infrav1.ReadyCondition)
	if c == nil || c.Status != status || c.Reason != reason || !strings.Contains(c.Message, says) {
		t.Fatalf("Ready = %+v; want %s/%s naming %q", c, status, reason, says)
	}
}

func TestIdentityStatus(t *testing.T) {
	envtest.Require(t, env)
	ctx := t.Context()
	system := namespace(t, "system")
	src := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: system, Name: "aws"},
		Data: map[string][]byte{"AWS_ACCESS_KEY_ID": []byte(credValue)}}
	if err := env.Client.Create(ctx, src); err != nil {
		t.Fatal(err)
	}
	id := &infrav1.TerraformClusterIdentity{
		ObjectMeta: metav1.ObjectMeta{Name: "status-aws"},
		Spec: infrav1.TerraformClusterIdentitySpec{
			SecretRef:         infrav1.SecretReference{Namespace: system, Name: "aws"},
			AllowedNamespaces: &infrav1.AllowedNamespaces{Selector: &metav1.LabelSelector{}},
		},
	}
	if err := env.Client.Create(ctx, id); err != nil {
		t.Fatal(err)
	}
	rec := events.NewFakeRecorder(20)
	h := &harness{t: t, id: id, recorder: rec, r: &identity.Reconciler{Client: env.Client, APIReader: env.Client, Recorder: rec}}

	got := h.reconcile(identity.RecheckReady)
	expectReady(t, got, metav1.ConditionTrue, infrav1.SecretFoundReason, system+"/aws")
	if len(h.events) != 0 {
		t.Errorf("a new, healthy identity emitted %v; want no event", h.events)
	}

	t.Run("a pass that changes nothing writes nothing", func(t *testing.T) {
		again := h.reconcile(identity.RecheckReady)
		if again.ResourceVersion != got.ResourceVersion {
			t.Fatalf("resourceVersion moved from %s to %s", got.ResourceVersion, again.ResourceVersion)
		}
	})

	t.Run("missing required keys are named", func(t *testing.T) {
		got.Spec.RequiredKeys = []string{"AWS_SECRET_ACCESS_KEY", "AWS_ACCESS_KEY_ID", "AWS_REGION"}
		if err := env.Client.Update(ctx, got); err != nil {
			t.Fatal(err)
		}
		incomplete := h.reconcile(identity.RecheckNotReady)
		expectReady(t, incomplete, metav1.ConditionFalse, infrav1.CredentialsIncompleteReason, "AWS_REGION, AWS_SECRET_ACCESS_KEY")
		if len(h.events) != 1 || !strings.HasPrefix(h.events[0], "Warning "+identity.SecretNotFoundEvent) {
			t.Errorf("events = %v; want one Warning %s", h.events, identity.SecretNotFoundEvent)
		}
	})

	t.Run("a deleted source Secret is SecretNotFound", func(t *testing.T) {
		if err := env.Client.Delete(ctx, src); err != nil {
			t.Fatal(err)
		}
		gone := h.reconcile(identity.RecheckNotReady)
		expectReady(t, gone, metav1.ConditionFalse, infrav1.SecretNotFoundReason, system+"/aws")
	})

	t.Run("the Secret coming back is SecretFound again", func(t *testing.T) {
		src = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: system, Name: "aws"},
			StringData: map[string]string{"AWS_ACCESS_KEY_ID": credValue, "AWS_SECRET_ACCESS_KEY": credValue, "AWS_REGION": "eu-west-1"}}
		if err := env.Client.Create(ctx, src); err != nil {
			t.Fatal(err)
		}
		expectReady(t, h.reconcile(identity.RecheckReady), metav1.ConditionTrue, infrav1.SecretFoundReason, "")
		if last := h.events[len(h.events)-1]; !strings.HasPrefix(last, "Normal "+identity.SecretFoundEvent) {
			t.Errorf("last event = %q; want Normal %s", last, identity.SecretFoundEvent)
		}
	})

	t.Run("status.namespaces lists namespaces with a used mirror", func(t *testing.T) {
		tenantB, tenantA, unused := namespace(t, "tenant-b"), namespace(t, "tenant-a"), namespace(t, "unused")
		for _, ns := range []string{tenantB, tenantA} {
			user := &infrav1.TerraformCluster{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c"},
				Spec: infrav1.TerraformClusterSpec{Source: infrav1.SourceSpec{Image: "registry.example/noop:v1"},
					IdentityRef: &infrav1.IdentityReference{Name: id.Name}},
			}
			if err := env.Client.Create(ctx, user); err != nil {
				t.Fatal(err)
			}
			if res, err := credentials.EnsureMirror(testContext(t), env.Client, env.Client, got, user); err != nil || res.Outcome != credentials.OutcomeCreated {
				t.Fatalf("EnsureMirror = %+v, %v", res, err)
			}
		}
		// A mirror-looking Secret nobody uses does not count.
		orphan := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: unused, Name: credentials.MirrorName(id.Name),
			Labels:      map[string]string{infrav1.MirroredLabel: "true", infrav1.ManagedLabel: "true"},
			Annotations: map[string]string{infrav1.IdentityAnnotation: id.Name, infrav1.SourceHashAnnotation: "x"}}}
		if err := env.Client.Create(ctx, orphan); err != nil {
			t.Fatal(err)
		}
		withNS := h.reconcile(identity.RecheckReady)
		want := []string{tenantA, tenantB}
		if tenantB < tenantA {
			want = []string{tenantB, tenantA}
		}
		if strings.Join(withNS.Status.Namespaces, ",") != strings.Join(want, ",") {
			t.Fatalf("status.namespaces = %v; want %v", withNS.Status.Namespaces, want)
		}
	})
}

func TestMissingIdentityIsDone(t *testing.T) {
	envtest.Require(t, env)
	r := &identity.Reconciler{Client: env.Client, APIReader: env.Client}
	res, err := r.Reconcile(testContext(t), ctrl.Request{NamespacedName: client.ObjectKey{Name: "never-created"}})
	if err != nil || res.RequeueAfter != 0 {
		t.Fatalf("Reconcile of a missing identity = %+v, %v; want done", res, err)
	}
}
