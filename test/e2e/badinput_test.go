package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/devenv"
)

// An image reference no local directory holds: the node reports it as a
// real kubelet does, and the TerraformCluster says ImagePullFailed naming
// the image, instead of waiting silently.
func unpullableImage(t *testing.T, ctx context.Context, f *flow) {
	objs := pick(f.quickstart("tofu"), f.base()...)
	for _, o := range objs {
		if o.GetKind() == "TerraformCluster" {
			f.set(o, "local/no-such-module:tofu", "spec", "source", "image")
		}
	}
	f.create(ctx, objs)
	f.waitFor(ctx, "ImagePullFailed reported", jobWait, func(ctx context.Context) (bool, string, error) {
		var tc infrav1.TerraformCluster
		if _, err := f.get(ctx, "quickstart", &tc); err != nil {
			return false, "", err
		}
		c := meta.FindStatusCondition(tc.Status.Conditions, infrav1.ApplyJobSucceededCondition)
		if c == nil {
			return false, "no ApplyJobSucceeded yet", nil
		}
		return c.Reason == infrav1.ImagePullFailedReason && strings.Contains(c.Message, "local/no-such-module:tofu"), c.Reason + ": " + c.Message, nil
	})
	f.teardown(ctx, objs, "")
}

// A module missing a contract output: the root module CAPTF renders
// re-exports every contract output, so the apply stops at validate
// (ApplyJobSucceeded=False, naming the missing output), and
// the TerraformCluster reports OutputsValid=False/OutputsMissing and is not
// provisioned, instead of waiting silently.
func missingOutput(t *testing.T, ctx context.Context, f *flow) {
	objs := pick(f.quickstart("tofu"), f.base()...)
	for _, o := range objs {
		if o.GetKind() == "TerraformCluster" {
			f.set(o, devenv.ExampleImage("no-exports-cluster", "tofu"), "spec", "source", "image")
		}
	}
	f.create(ctx, objs)
	var tc infrav1.TerraformCluster
	f.waitFor(ctx, "the apply fails at validate, and OutputsMissing is reported", 3*time.Minute, func(ctx context.Context) (bool, string, error) {
		if _, err := f.get(ctx, "quickstart", &tc); err != nil {
			return false, "", err
		}
		apply := meta.FindStatusCondition(tc.Status.Conditions, infrav1.ApplyJobSucceededCondition)
		outputs := meta.FindStatusCondition(tc.Status.Conditions, infrav1.OutputsValidCondition)
		if apply == nil || outputs == nil {
			return false, "no ApplyJobSucceeded or OutputsValid yet", nil
		}
		ok := apply.Reason == infrav1.ApplyFailedReason && strings.Contains(apply.Message, `step validate: The module has no output "exports"`) &&
			outputs.Status == metav1.ConditionFalse && outputs.Reason == infrav1.OutputsMissingReason
		return ok, apply.Reason + ": " + apply.Message + " / " + outputs.Reason + ": " + outputs.Message, nil
	})
	if p := tc.Status.Initialization.Provisioned; p != nil && *p {
		t.Error("a TerraformCluster missing a contract output is provisioned")
	}
	// The fix: an image whose module keeps the contract.
	patch := client.MergeFrom(tc.DeepCopy())
	tc.Spec.Source.Image = devenv.ExampleImage("noop-cluster", "tofu")
	if err := f.env.Client.Patch(ctx, &tc, patch); err != nil {
		t.Fatal(err)
	}
	f.waitFor(ctx, "the fixed TerraformCluster is provisioned", jobWait, func(ctx context.Context) (bool, string, error) {
		if _, err := f.get(ctx, "quickstart", &tc); err != nil {
			return false, "", err
		}
		return provisionedReady(tc.Status.WorkspaceStatus), ready(tc.Status.Conditions), nil
	})
	f.teardown(ctx, objs, "tofu")
}
