package workspace

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
)

// setBlockMove marks the object clusterctl.cluster.x-k8s.io/block-move
// just before a Job starts, written at once: clusterctl move must not move
// an object whose Job may be writing its state.
func (p *pass) setBlockMove(ctx context.Context) error {
	if _, ok := p.before.GetAnnotations()[infrav1.BlockMoveAnnotation]; ok {
		// Stored already: a clearBlockMove of this pass took it off the
		// object as the pass leaves it only; it stays.
		ann := p.obj.GetAnnotations()
		if ann == nil {
			ann = map[string]string{}
		}
		ann[infrav1.BlockMoveAnnotation] = "true"
		p.obj.SetAnnotations(ann)
		return nil
	}
	patch := client.MergeFrom(p.obj.DeepCopyObject().(client.Object))
	for _, o := range []client.Object{p.obj, p.before} {
		ann := o.GetAnnotations()
		if ann == nil {
			ann = map[string]string{}
		}
		ann[infrav1.BlockMoveAnnotation] = "true"
		o.SetAnnotations(ann)
	}
	target := p.obj.DeepCopyObject().(client.Object)
	// The object as stored after the write (p.before follows it) is an
	// echo the next pass need not read.
	p.expectOwnWrite(p.before)
	if err := p.e.client().Patch(ctx, target, patch); err != nil {
		p.e.ForgetEcho(p.obj)
		return fmt.Errorf("setting %s: %w", infrav1.BlockMoveAnnotation, err)
	}
	return nil
}

// clearBlockMove lifts the mark once no Job of the object runs; the
// pass's final patch writes it.
func (p *pass) clearBlockMove() {
	ann := p.obj.GetAnnotations()
	if _, ok := ann[infrav1.BlockMoveAnnotation]; !ok || p.active != nil {
		return
	}
	delete(ann, infrav1.BlockMoveAnnotation)
	p.obj.SetAnnotations(ann)
	p.specChanged = true
}
