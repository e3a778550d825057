package runner

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"captf.io/captf/pkg/state"
)

// chunkedState reports, before any command touches the state, a state
// split across -part-N Secrets that this image's runtime cannot keep.
// Terraform 1.6 and later write a state over 1 MiB compressed as the base
// Secret plus -part-1, -part-2, …; OpenTofu (and Terraform before 1.6)
// reads and writes only the base Secret: it would read a truncated gzip
// stream and, writing back, leave stale parts that Terraform later
// appends. The runtime is asked its name only when there are parts.
// It returns "" when the run may go on, else why it may not.
func (r *run) chunkedState() (string, error) {
	b, err := parseBackend(r.o.BackendConfig)
	if err != nil {
		return "", nil // no kubernetes backend here: nothing to check
	}
	ctx, cancel := context.WithTimeout(context.Background(), surplusTimeout)
	defer cancel()
	c, err := b.client()
	if err != nil {
		return "", fmt.Errorf("reaching the API server: %w", err)
	}
	list, err := c.Secrets(b.namespace).List(ctx, metav1.ListOptions{LabelSelector: state.Selector(b.suffix).String()})
	if err != nil {
		return "", fmt.Errorf("listing the state Secrets: %w", err)
	}
	parts := state.Parts(b.suffix, list.Items)
	if len(parts) == 0 {
		return "", nil
	}
	name, version := r.runtimeName()
	if chunks(name, version) {
		return "", nil
	}
	size := 0
	for _, s := range list.Items {
		if s.Name == state.SecretName(b.suffix) || slices.Contains(parts, s.Name) {
			size += len(s.Data[state.DataKey])
		}
	}
	runtime := strings.TrimSpace(name + " " + version)
	if runtime == "" {
		runtime = "this image's runtime, which could not be identified (its `version` names neither Terraform nor OpenTofu), is taken to be one that"
	}
	return fmt.Sprintf("the state is split across %d Secrets (%s and %s, %.1f MiB compressed), as Terraform 1.6 and later write a state over 1 MiB; "+
		"%s reads and writes only the base Secret and would corrupt it, so nothing was run. "+
		"Go back to a Terraform image for this object; to move it to OpenTofu, first shrink the state below 1 MiB compressed with Terraform, which deletes the -part-N Secrets",
		len(parts)+1, state.SecretName(b.suffix), strings.Join(parts, ", "), float64(size)/(1<<20), runtime), nil
}

// versionLine is the first line of `version`: "Terraform v1.8.5" or
// "OpenTofu v1.12.6".
var versionLine = regexp.MustCompile(`^(Terraform|OpenTofu) v(\d+)\.(\d+)\.\S*`)

// runtimeName runs `version` (text: only it names the runtime) and
// returns the runtime's name and version ("" when it does not say).
func (r *run) runtimeName() (name, version string) {
	out := r.x.run(command{name: "version", args: []string{"version"}, stdout: captured, timeout: versionTimeout})
	line, _, _ := strings.Cut(strings.TrimSpace(string(out.stdout)), "\n")
	m := versionLine.FindStringSubmatch(strings.TrimSpace(line))
	if m == nil {
		return "", ""
	}
	return m[1], strings.TrimPrefix(m[0], m[1]+" v")
}

// chunks says whether the runtime named so writes and reads a state split
// across Secrets: Terraform from 1.6 on. An unknown runtime is taken not
// to, which refuses the run rather than risk the state.
func chunks(name, version string) bool {
	if name != "Terraform" {
		return false
	}
	major, minor, _ := strings.Cut(version, ".")
	minor, _, _ = strings.Cut(minor, ".")
	ma, err1 := strconv.Atoi(major)
	mi, err2 := strconv.Atoi(minor)
	return err1 == nil && err2 == nil && (ma > 1 || (ma == 1 && mi >= 6))
}
