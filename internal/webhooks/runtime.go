package webhooks

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/imagemeta"
	"captf.io/captf/pkg/state"
)

// labelTimeout bounds the registry read of one admission.
const labelTimeout = 4 * time.Second

// imageCheck is what the runtime switch check needs: the label reader, a
// live reader for the object's image pull Secrets, and those.
type imageCheck struct {
	images imagemeta.Reader
	reader client.Reader
	ns     string
	pull   []corev1.LocalObjectReference
}

// RuntimeSwitch is the runtime switch check of the kinds whose image may
// change (TerraformCluster, TerraformMachinePool): Images reads module
// images' labels, with the object's image pull Secrets read through
// Reader; nil Images skips the check.
type RuntimeSwitch struct {
	Images imagemeta.Reader
	Reader client.Reader
}

// check runs runtimeSwitch for an object of namespace ns with jobs policy
// jobs, appending a refusal to errs.
func (r RuntimeSwitch) check(ctx context.Context, ns string, jobs *infrav1.JobsSpec, oldImage, image string, stateBytes int64, errs field.ErrorList) (admission.Warnings, field.ErrorList) {
	chk := imageCheck{images: r.Images, reader: r.Reader, ns: ns}
	if jobs != nil {
		chk.pull = jobs.ImagePullSecrets
	}
	warnings, refused := runtimeSwitch(ctx, chk, oldImage, image, stateBytes, field.NewPath("spec", "source", "image"))
	if refused != nil {
		errs = append(errs, refused)
	}
	return warnings, errs
}

// runtimeSwitch refuses moving an object whose state no longer fits one
// Secret (status.stateBytes) to an image whose io.captf.runtime is tofu,
// read with the object's image pull Secrets. An image whose labels cannot
// be read, or that has none, is let through with a warning: the manager
// checks again before each Job, and the runner before writing.
func runtimeSwitch(ctx context.Context, chk imageCheck, oldImage, image string, stateBytes int64, path *field.Path) (admission.Warnings, *field.Error) {
	if chk.images == nil || image == oldImage || state.FitsOneSecret(stateBytes, 1) {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, labelTimeout)
	defer cancel()
	if chk.reader != nil {
		pull, err := imagemeta.ReadPullSecrets(ctx, chk.reader, chk.ns, chk.pull)
		if err != nil {
			return admission.Warnings{"could not read the image pull Secrets (" + err.Error() + "): whether image " + image + "'s runtime can keep this object's state is checked before its Job runs"}, nil
		}
		ctx = imagemeta.WithPullSecrets(ctx, pull)
	}
	labels, err := chk.images.Labels(ctx, image)
	switch {
	case err != nil:
		return admission.Warnings{"could not read the labels of image " + image + " (" + err.Error() + "): whether its runtime can keep this object's state is checked before its Job runs"}, nil
	case labels[imagemeta.LabelRuntime] == "":
		return admission.Warnings{"image " + image + " has no " + imagemeta.LabelRuntime + " label: whether its runtime can keep this object's state is checked when its Job runs"}, nil
	case labels[imagemeta.LabelRuntime] == imagemeta.RuntimeTofu:
		return nil, field.Forbidden(path, state.OneSecretRefusal(image, stateBytes, pieces(stateBytes)))
	}
	return nil, nil
}

// pieces is how many Secrets Terraform splits a state of bytes into.
func pieces(bytes int64) int {
	return int((bytes + state.ChunkSize - 1) / state.ChunkSize)
}
