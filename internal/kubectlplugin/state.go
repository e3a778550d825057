package kubectlplugin

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"

	"captf.io/captf/pkg/state"
)

// secretLimit is the most data one Secret may hold.
const secretLimit = 1 << 20

func newStateCommand(flags *genericclioptions.ConfigFlags, streams Streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "state",
		Short: "Look at the Terraform/OpenTofu state of a CAPTF object",
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "size <kind>/<name>",
		Short: "Show each state Secret's compressed size, the total and the headroom to 1 MiB",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return stateSize(c.Context(), flags, streams, args[0])
		},
	})
	var showSensitive bool
	show := &cobra.Command{
		Use:   "show <kind>/<name>",
		Short: "Print the decoded state JSON as the runtime wrote it (sensitive outputs masked)",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return stateShow(c.Context(), flags, streams, args[0], showSensitive)
		},
	}
	show.Flags().BoolVar(&showSensitive, "show-sensitive", false, "print the values of sensitive outputs too")
	cmd.AddCommand(show)
	return cmd
}

// listState finds the object's state Secrets from its namespace, kind and
// name (the same suffix the backend uses), straight from the API server.
func listState(ctx context.Context, flags *genericclioptions.ConfigFlags, arg string) (target, string, []corev1.Secret, error) {
	t, err := parseTarget(arg)
	if err != nil {
		return t, "", nil, err
	}
	cs, ns, err := clients(flags)
	if err != nil {
		return t, "", nil, err
	}
	suffix, err := state.Suffix(ns, t.Kind, t.Name)
	if err != nil {
		return t, "", nil, err
	}
	secrets, err := listSecrets(ctx, cs, ns, suffix)
	if err != nil {
		return t, suffix, nil, fmt.Errorf("listing the state Secrets of %s %s/%s: %w", t.Kind, ns, t.Name, err)
	}
	if len(secrets) == 0 {
		return t, suffix, nil, fmt.Errorf("%s %s/%s has no state Secret (%s): it never applied, or its state is lost",
			t.Kind, ns, t.Name, state.SecretName(suffix))
	}
	return t, suffix, secrets, nil
}

func listSecrets(ctx context.Context, cs kubernetes.Interface, ns, suffix string) ([]corev1.Secret, error) {
	list, err := cs.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{LabelSelector: state.Selector(suffix).String()})
	if err != nil {
		return nil, err
	}
	return list.Items, nil
}

func stateSize(ctx context.Context, flags *genericclioptions.ConfigFlags, streams Streams, arg string) error {
	t, suffix, secrets, err := listState(ctx, flags, arg)
	if err != nil {
		return err
	}
	sort.Slice(secrets, func(i, j int) bool { return chunkOrder(suffix, secrets[i].Name) < chunkOrder(suffix, secrets[j].Name) })
	w := tabwriter.NewWriter(streams.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "SECRET\tBYTES\tHEADROOM")
	var total int
	for _, s := range secrets {
		n := len(s.Data[state.DataKey])
		total += n
		fmt.Fprintf(w, "%s\t%d\t%d\n", s.Name, n, secretLimit-n)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(streams.Out, "\nTotal: %d bytes compressed in %d Secret(s); headroom to 1 MiB: %d bytes\n", total, len(secrets), secretLimit-total)
	_, raw, err := state.DecodeRaw(suffix, secrets)
	switch {
	case err != nil:
		fmt.Fprintf(streams.Out, "Written by: unknown (the state cannot be decoded: %v)\n", err)
	default:
		fmt.Fprintf(streams.Out, "Written by: %s\n", writtenBy(raw, len(secrets)))
	}
	if total > secretLimit*9/10 {
		fmt.Fprintf(streams.Out, "Warning: %s %s is near the 1 MiB Secret limit: OpenTofu cannot store it past 1 MiB; see the size-limits runbook.\n", t.Kind, t.Name)
	}
	return nil
}

// chunkOrder sorts the base Secret before its -part-N pieces.
func chunkOrder(suffix, name string) int {
	rest, ok := strings.CutPrefix(name, state.SecretName(suffix)+"-part-")
	if !ok {
		return 0
	}
	n := 0
	_, _ = fmt.Sscanf(rest, "%d", &n)
	return n
}

func stateShow(ctx context.Context, flags *genericclioptions.ConfigFlags, streams Streams, arg string, showSensitive bool) error {
	_, suffix, secrets, err := listState(ctx, flags, arg)
	if err != nil {
		return err
	}
	_, raw, err := state.DecodeRaw(suffix, secrets)
	if err != nil {
		var se *state.Error
		if errors.As(err, &se) {
			return fmt.Errorf("the state cannot be read (%s): %w", se.Reason, err)
		}
		return err
	}
	if !showSensitive {
		if raw, err = maskSensitiveOutputs(raw); err != nil {
			return err
		}
	}
	_, err = streams.Out.Write(raw)
	return err
}
