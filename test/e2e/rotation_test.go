package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/devenv"
)

// credentialKey is the key of the identity's Secret the creds-cluster
// module reads (from the file the Job's credentials volume holds).
const credentialKey = "NOOP_TOKEN"

// Rotating a credential: the operator edits the identity's source Secret
// in place; the next Job of an object using the identity runs with the
// new value. The creds-cluster module publishes a fingerprint of the
// credential it read in its exports, so the change shows in the
// TerraformCluster's status.exports. Values are never logged: only
// whether the fingerprint matches the old or the new credential.
func credentialsRotation(t *testing.T, ctx context.Context, f *flow) {
	objs := pick(f.quickstart("tofu"), f.base()...)
	for _, o := range objs {
		if o.GetKind() == "TerraformCluster" {
			f.set(o, devenv.ExampleImage("creds-cluster", "tofu"), "spec", "source", "image")
		}
	}
	f.create(ctx, objs)

	var source corev1.Secret
	if err := f.env.Client.Get(ctx, client.ObjectKey{Namespace: "captf-system", Name: f.sourceSecret()}, &source); err != nil {
		t.Fatal(err)
	}
	old := fingerprint(source.Data[credentialKey])
	rotated := []byte("rotated-" + f.ns + "-" + time.Now().Format(time.RFC3339Nano))
	fresh := fingerprint(rotated)

	var tc infrav1.TerraformCluster
	f.waitFor(ctx, "the TerraformCluster is provisioned", jobWait, func(ctx context.Context) (bool, string, error) {
		if _, err := f.get(ctx, "quickstart", &tc); err != nil {
			return false, "", err
		}
		return provisionedReady(tc.Status.WorkspaceStatus), ready(tc.Status.Conditions), nil
	})
	if got := exported(t, &tc); got.Fingerprint != old || got.Generation != 1 {
		t.Fatalf("the first apply read %s (generation %d), want the credential the Secret held", whichCredential(got.Fingerprint, old, fresh), got.Generation)
	}
	firstMirror := f.mirrorHash(ctx)

	// Rotate, then change the object so that its next Job (an apply of
	// the new inputs) starts.
	source.Data[credentialKey] = rotated
	if err := f.env.Client.Update(ctx, &source); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(tc.DeepCopy())
	tc.Spec.Variables = jsonValue(t, map[string]any{"generation": 2})
	if err := f.env.Client.Patch(ctx, &tc, patch); err != nil {
		t.Fatal(err)
	}
	f.waitFor(ctx, "the next apply ran and the exports show what it read", jobWait, func(ctx context.Context) (bool, string, error) {
		if _, err := f.get(ctx, "quickstart", &tc); err != nil {
			return false, "", err
		}
		got := exported(t, &tc)
		return got.Generation == 2, fmt.Sprintf("exports of generation %d, %s", got.Generation, ready(tc.Status.Conditions)), nil
	})
	if got := exported(t, &tc); got.Fingerprint != fresh {
		t.Errorf("the Job after the rotation read %s, want the rotated credential", whichCredential(got.Fingerprint, old, fresh))
	}
	if h := f.mirrorHash(ctx); h == firstMirror || h == "" {
		t.Errorf("the mirror's %s did not move with the rotation", infrav1.SourceHashAnnotation)
	}

	f.teardown(ctx, objs, "tofu")
}

func fingerprint(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func whichCredential(got, old, fresh string) string {
	switch got {
	case old:
		return "the credential from before the rotation"
	case fresh:
		return "the rotated credential"
	case "":
		return "no credential"
	}
	return "a credential that is neither the old nor the rotated one"
}

type credsExports struct {
	Fingerprint string `json:"credential_fingerprint"`
	Generation  int    `json:"generation"`
}

func exported(t *testing.T, tc *infrav1.TerraformCluster) credsExports {
	t.Helper()
	var e credsExports
	if tc.Status.Exports != nil {
		if err := json.Unmarshal(tc.Status.Exports.Raw, &e); err != nil {
			t.Fatalf("status.exports: %v", err)
		}
	}
	return e
}

// mirrorHash is the source hash the credentials mirror says it copied.
func (f *flow) mirrorHash(ctx context.Context) string {
	f.t.Helper()
	var mirror corev1.Secret
	if _, err := f.get(ctx, "captf-creds-"+f.identity(), &mirror); err != nil {
		f.t.Fatal(err)
	}
	return mirror.Annotations[infrav1.SourceHashAnnotation]
}

func jsonValue(t *testing.T, v any) *apiextensionsv1.JSON {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return &apiextensionsv1.JSON{Raw: raw}
}
