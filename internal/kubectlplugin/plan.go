package kubectlplugin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
)

func newPlanCommands(flags *genericclioptions.ConfigFlags, streams Streams) []*cobra.Command {
	plan := &cobra.Command{
		Use:   "plan <kind>/<name>",
		Short: "Show the plan that waits for approval before the object applies",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			cl, ns, t, err := planClient(flags, args[0])
			if err != nil {
				return err
			}
			p, err := livePlan(c.Context(), cl, ns, t, "")
			if err != nil {
				return err
			}
			printPlan(streams.Out, p, t)
			return nil
		},
	}
	var planName string
	approve := &cobra.Command{
		Use:   "approve <kind>/<name> [--plan <name>]",
		Short: "Approve the object's pending plan, as you (the plan is applied exactly as planned)",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			cl, ns, t, err := planClient(flags, args[0])
			if err != nil {
				return err
			}
			return approvePlan(c.Context(), cl, ns, t, planName, streams.Out)
		},
	}
	approve.Flags().StringVar(&planName, "plan", "", "the TerraformPlan to approve (default: the object's live plan)")
	return []*cobra.Command{plan, approve}
}

func planClient(flags *genericclioptions.ConfigFlags, arg string) (client.Client, string, target, error) {
	t, err := parseTarget(arg)
	if err != nil {
		return nil, "", t, err
	}
	if t.Kind == "TerraformMachine" {
		return nil, "", t, errors.New("machines are never gated by a plan: only TerraformClusters and TerraformMachinePools are")
	}
	cfg, err := flags.ToRESTConfig()
	if err != nil {
		return nil, "", t, err
	}
	ns, _, err := flags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return nil, "", t, err
	}
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return nil, "", t, err
	}
	if err := infrav1.AddToScheme(s); err != nil {
		return nil, "", t, err
	}
	cl, err := client.New(cfg, client.Options{Scheme: s})
	return cl, ns, t, err
}

// livePlan finds the target's live plan: the named one, else the newest
// Pending or Approved plan for the target.
func livePlan(ctx context.Context, cl client.Client, ns string, t target, name string) (*infrav1.TerraformPlan, error) {
	if name != "" {
		p := &infrav1.TerraformPlan{}
		if err := cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, p); err != nil {
			return nil, err
		}
		if p.Spec.TargetRef.Kind != t.Kind || p.Spec.TargetRef.Name != t.Name {
			return nil, fmt.Errorf("TerraformPlan %s plans for %s %s, not %s %s", name, p.Spec.TargetRef.Kind, p.Spec.TargetRef.Name, t.Kind, t.Name)
		}
		return p, nil
	}
	var list infrav1.TerraformPlanList
	if err := cl.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	var live []infrav1.TerraformPlan
	for _, p := range list.Items {
		phase := infrav1.PlanPhase(p.Labels[infrav1.PlanPhaseLabel])
		if p.Spec.TargetRef.Kind == t.Kind && p.Spec.TargetRef.Name == t.Name && (phase == infrav1.PlanPhasePending || phase == infrav1.PlanPhaseApproved) {
			live = append(live, p)
		}
	}
	if len(live) == 0 {
		return nil, fmt.Errorf("no plan of %s %s/%s waits for approval", t.Kind, ns, t.Name)
	}
	sort.Slice(live, func(i, j int) bool { return live[i].CreationTimestamp.After(live[j].CreationTimestamp.Time) })
	return &live[0], nil
}

func printPlan(out io.Writer, p *infrav1.TerraformPlan, t target) {
	s := p.Spec.Summary
	fmt.Fprintf(out, "TerraformPlan %s (%s, %s) for %s %s/%s\n", p.Name, p.Spec.Reason, p.Labels[infrav1.PlanPhaseLabel], t.Kind, p.Namespace, t.Name)
	fmt.Fprintf(out, "Plans inputs hash %s; plan hash %s\n", p.Spec.InputsHash, p.Spec.PlanHash)
	fmt.Fprintf(out, "Changes: %d to create, %d to update, %d to replace, %d to delete (import %d, move %d, forget %d, output changes %d)\n",
		s.Create, s.Update, s.Replace, s.Delete, s.Import, s.Move, s.Forget, s.OutputChanges)
	for _, r := range s.Resources {
		fmt.Fprintf(out, "  %s\n", r)
	}
	if s.Truncated {
		fmt.Fprintln(out, "  ... (more resources; see the plan Job's log)")
	}
	if approved(p) {
		fmt.Fprintf(out, "Approved by %s\n", p.Spec.ApprovedBy)
		return
	}
	fmt.Fprintf(out, "Approve with: kubectl captf approve %s/%s -n %s --plan %s\n", strings.ToLower(shortKind(t.Kind)), t.Name, p.Namespace, p.Name)
}

func approved(p *infrav1.TerraformPlan) bool { return p.Spec.Approved != nil && *p.Spec.Approved }

func shortKind(kind string) string {
	if kind == "TerraformMachinePool" {
		return "tfmp"
	}
	return "tfc"
}

// approvePlan sets spec.approved and spec.approvedBy, the user the API
// server authenticates this request as.
func approvePlan(ctx context.Context, cl client.Client, ns string, t target, name string, out io.Writer) error {
	p, err := livePlan(ctx, cl, ns, t, name)
	if err != nil {
		return err
	}
	if approved(p) {
		fmt.Fprintf(out, "TerraformPlan %s is already approved by %s\n", p.Name, p.Spec.ApprovedBy)
		return nil
	}
	review := &authenticationv1.SelfSubjectReview{}
	if err := cl.Create(ctx, review); err != nil {
		return fmt.Errorf("finding out who you are (SelfSubjectReview): %w", err)
	}
	user := review.Status.UserInfo.Username
	patch := fmt.Sprintf(`{"spec":{"approved":true,"approvedBy":%q}}`, user)
	if err := cl.Patch(ctx, p, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		return fmt.Errorf("approving TerraformPlan %s: %w", p.Name, err)
	}
	fmt.Fprintf(out, "TerraformPlan %s approved by %s: %s %s/%s applies exactly this plan next\n", p.Name, user, t.Kind, ns, t.Name)
	return nil
}
