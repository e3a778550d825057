package workspace

import (
	"context"
	"time"

	"captf.io/captf/internal/decide"
	"captf.io/captf/internal/imagemeta"
	"captf.io/captf/pkg/state"
)

// labelTimeout bounds the registry read of one pass.
const labelTimeout = 10 * time.Second

// runtimeRefusal says why the op Job of image img must not run: the
// image's runtime keeps the state in one Secret (io.captf.runtime=tofu)
// and the object's state does not fit one. The labels are read only for
// such a state; "" lets the Job run, also when they cannot be read (the
// runner refuses to write a base Secret while -part-N Secrets exist).
// Only an apply or a plan runs the image of the spec on this state: the
// others run the one recorded with it, and a restore pushes a backup (the
// runner checks it).
func (p *pass) runtimeRefusal(ctx context.Context, op decide.Operation, img string) string {
	if p.e.Images == nil || (op != decide.OpApply && op != decide.OpPlan) {
		return ""
	}
	bytes, pieces := p.w.Status.StateBytes, len(p.stSecrets)
	if state.FitsOneSecret(bytes, pieces) {
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, labelTimeout)
	defer cancel()
	labels, err := p.e.Images.Labels(ctx, img)
	if err != nil || labels[imagemeta.LabelRuntime] != imagemeta.RuntimeTofu {
		return ""
	}
	return state.OneSecretRefusal(img, bytes, pieces)
}
