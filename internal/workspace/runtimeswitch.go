package workspace

import (
	"context"
	"fmt"
	"time"

	"captf.io/captf/internal/decide"
	"captf.io/captf/internal/imagemeta"
	"captf.io/captf/pkg/state"
)

// labelTimeout bounds the registry read of one pass.
const labelTimeout = 10 * time.Second

// runtimeRefusal says what stops the op Job of image img, and why: the
// image's runtime keeps the state in one Secret (io.captf.runtime=tofu)
// and the object's state does not fit one (ObstacleRuntimeRefused); or
// the image is another than the one last applied and its labels cannot be
// read, so that nothing says it can (ObstacleRuntimeUnknown, retried). The
// labels are read, with the object's image pull Secrets, only for such a
// state; no obstacle lets the Job run. Only an apply or a plan runs the image of the spec on this
// state: the others run the one recorded with it, and a restore pushes a
// backup (the runner checks it).
func (p *pass) runtimeRefusal(ctx context.Context, op decide.Operation, img string) (decide.Obstacle, string, error) {
	if p.e.Images == nil || (op != decide.OpApply && op != decide.OpPlan) {
		return "", "", nil
	}
	bytes, pieces := p.w.Status.StateBytes, len(p.stored.secrets)
	if state.FitsOneSecret(bytes, pieces) {
		return "", "", nil
	}
	pull, err := imagemeta.ReadPullSecrets(ctx, p.e.APIReader, p.obj.GetNamespace(), p.eff.Policy.ImagePullSecrets)
	if err != nil {
		return "", "", err
	}
	ctx, cancel := context.WithTimeout(imagemeta.WithPullSecrets(ctx, pull), labelTimeout)
	defer cancel()
	labels, err := p.e.Images.Labels(ctx, img)
	applied := ""
	switch {
	case p.inputs.applied != nil:
		applied = p.inputs.applied.Image
	case p.w.Status.Source != nil:
		applied = p.w.Status.Source.Image
	}
	switch {
	case err == nil && labels[imagemeta.LabelRuntime] == imagemeta.RuntimeTofu:
		return decide.ObstacleRuntimeRefused, state.OneSecretRefusal(img, bytes, pieces), nil
	case err != nil && applied != "" && applied != img:
		return decide.ObstacleRuntimeUnknown, fmt.Sprintf("Could not read the labels of image %s (%s) to check that its runtime can keep this object's state (%.2f MiB compressed, more than OpenTofu keeps); "+
			"the %s waits and retries. Make the image's io.captf.runtime label readable (spec.jobs.imagePullSecrets), or go back to image %s",
			img, err, float64(bytes)/(1<<20), op, applied), nil
	}
	return "", "", nil
}
