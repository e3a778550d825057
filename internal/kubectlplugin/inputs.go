package kubectlplugin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/credentials"
	captfinputs "captf.io/captf/internal/inputs"
	"captf.io/captf/internal/records"
	"captf.io/captf/internal/runner"
	"captf.io/captf/pkg/state"
)

func newInputsCommand(flags *genericclioptions.ConfigFlags, streams Streams) *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "inputs <kind>/<name> --out DIR",
		Short: "Write the inputs a destroy would render into DIR and print how to run that destroy by hand",
		Long: `Reads the object's inputs records, picks the one a destroy renders (the same
rule as the manager), writes its main.tf.json and terraform.tfvars.json into
DIR (mode 0600) and prints the image, the identity and docker/podman lines
that run the destroy by hand: the stuck-destroy runbook as a command. The
files hold sensitive values; their content is never printed.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if dir == "" {
				return errors.New("--out DIR is required: the directory the two files are written to (created with mode 0700)")
			}
			return inputs(c.Context(), flags, streams.Out, args[0], dir)
		},
	}
	cmd.Flags().StringVar(&dir, "out", "", "directory to write main.tf.json and terraform.tfvars.json into (created with mode 0700)")
	return cmd
}

// rendered is what the command found: the picked record and what a run
// of it needs.
type rendered struct {
	t                   target
	ns, suffix          string
	rec                 *records.Record
	attempt, applied    *records.Record
	stateHash           string
	stateFound          bool
	keyUnreadable       bool
	backendLabels       map[string]string
	image               string
	pinned              bool
	dir, credentialsRef string
}

func inputs(ctx context.Context, flags *genericclioptions.ConfigFlags, out io.Writer, arg, dir string) error {
	t, err := parseTarget(arg)
	if err != nil {
		return err
	}
	cl, ns, err := liveClient(flags)
	if err != nil {
		return err
	}
	r := &rendered{t: t, ns: ns}
	if r.suffix, err = state.Suffix(ns, t.Kind, t.Name); err != nil {
		return err
	}
	if r.attempt, r.applied, err = records.Load(ctx, cl, ns, t.Kind, t.Name); err != nil {
		return fmt.Errorf("reading the inputs records of %s %s/%s: %w", t.Kind, ns, t.Name, err)
	}
	if err := r.readState(ctx, cl); err != nil {
		return err
	}
	if err := r.rekey(ctx, cl); err != nil {
		return err
	}
	var mismatch bool
	if r.rec, mismatch = records.ForDestroy(r.attempt, r.applied, r.stateHash); r.rec == nil {
		return noRecordError(t, ns)
	}
	if r.dir, err = writeInputs(out, dir, r.rec); err != nil {
		return err
	}
	r.image, r.pinned = pinnedImage(r.rec, r.applied)
	r.printSummary(out, mismatch)
	r.printReproduction(out)
	return nil
}

// liveClient is an uncached client (every read hits the API server) and
// the namespace of the kubeconfig flags.
func liveClient(flags *genericclioptions.ConfigFlags) (client.Client, string, error) {
	cfg, ns, err := configAndNamespace(flags)
	if err != nil {
		return nil, "", err
	}
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return nil, "", err
	}
	cl, err := client.New(cfg, client.Options{Scheme: s})
	return cl, ns, err
}

// rekey brings the hashes an earlier release wrote (h2) to the current
// scheme with the object's plan key, so that records and state written
// on either side of the upgrade compare as the manager compares them.
// Without the key (none yet, or not readable) they compare as written.
func (r *rendered) rekey(ctx context.Context, cl client.Client) error {
	s := &corev1.Secret{}
	err := cl.Get(ctx, client.ObjectKey{Namespace: r.ns, Name: records.PlanKeyName(r.t.Kind, r.t.Name)}, s)
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case apierrors.IsForbidden(err):
		r.keyUnreadable = true
		return nil
	case err != nil:
		return fmt.Errorf("reading the plan key of %s %s/%s: %w", r.t.Kind, r.ns, r.t.Name, err)
	}
	key := s.Data[records.PlanKeyData]
	r.stateHash = captfinputs.Rekey(key, r.stateHash)
	for _, rec := range []*records.Record{r.attempt, r.applied} {
		if rec != nil {
			rec.InputsHash = captfinputs.Rekey(key, rec.InputsHash)
		}
	}
	return nil
}

// readState reads the base state Secret's inputs hash and labels (never
// its data), and the labels the backend must be given: the base Secret's
// minus the ones the backend sets itself, or the object's owner labels
// when there is no state.
func (r *rendered) readState(ctx context.Context, cl client.Client) error {
	base := &metav1.PartialObjectMetadata{}
	base.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	err := cl.Get(ctx, client.ObjectKey{Namespace: r.ns, Name: state.SecretName(r.suffix)}, base)
	if err == nil {
		r.stateFound, r.stateHash = true, base.Annotations[infrav1.InputsHashAnnotation]
		r.backendLabels = maps.Clone(base.Labels)
		for _, k := range []string{state.LabelState, state.LabelSecretSuffix, state.LabelWorkspace, state.LabelManagedBy} {
			delete(r.backendLabels, k)
		}
		return nil
	}
	if !apierrors.IsNotFound(err) {
		return fmt.Errorf("reading the state Secret %s of %s %s/%s: %w", state.SecretName(r.suffix), r.t.Kind, r.ns, r.t.Name, err)
	}
	obj := &metav1.PartialObjectMetadata{}
	obj.SetGroupVersionKind(infrav1.GroupVersion.WithKind(r.t.Kind))
	cluster := ""
	if cl.Get(ctx, client.ObjectKey{Namespace: r.ns, Name: r.t.Name}, obj) == nil {
		cluster = obj.Labels[infrav1.ClusterNameLabel]
	}
	r.backendLabels = state.OwnerLabels(r.t.Kind, r.t.Name, cluster)
	return nil
}

func noRecordError(t target, ns string) error {
	next := "the controller reports DestroyFailed (\"inputs Secrets (durable and applied) are missing\") and retries forever"
	if t.Kind != "TerraformMachine" {
		next = "the controller destroys with the object's current inputs instead, which this command does not render"
	}
	return fmt.Errorf("%s %s/%s has no inputs record (neither %s nor %s): a destroy cannot be rendered from recorded inputs; %s. "+
		"Stuck-destroy runbook: re-create the record from a backup of it (strip uid and resourceVersion), "+
		"or release the object with spec.deletionPolicy: Retain (keeps its state and backups; the infrastructure stays), "+
		"or clean the cloud resources out of band",
		t.Kind, ns, t.Name, records.AttemptName(t.Kind, t.Name), records.AppliedName(t.Kind, t.Name), next)
}

// writeInputs writes the record's two files into dir, and the working
// directory a by-hand run mounts at /captf/work: work/root holding the
// same two files (the runner's copy), work/tmp, and work/cli.tfrc (the
// runner's provider installation config). It returns dir made absolute.
func writeInputs(out io.Writer, dir string, rec *records.Record) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if info, err := os.Stat(abs); err == nil && info.Mode().Perm()&0o077 != 0 {
		fmt.Fprintf(out, "Warning: %s already exists with mode %v: others may read the sensitive files written into it.\n", abs, info.Mode().Perm())
	}
	for _, d := range []string{abs, filepath.Join(abs, "work"), filepath.Join(abs, "work", "root"), filepath.Join(abs, "work", "tmp")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return "", fmt.Errorf("creating %s: %w", d, err)
		}
	}
	files := map[string][]byte{
		records.MainFile: rec.MainTF, records.TfvarsFile: rec.Tfvars,
		filepath.Join("work", "root", records.MainFile): rec.MainTF, filepath.Join("work", "root", records.TfvarsFile): rec.Tfvars,
		filepath.Join("work", "cli.tfrc"): []byte(runner.CLIConfig("/captf/providers")),
	}
	if _, err := os.Stat(filepath.Join(abs, "creds.env")); errors.Is(err, os.ErrNotExist) {
		files["creds.env"] = []byte("# KEY=value lines: the identity's credentials (see the printed command).\n")
	}
	for name, data := range files {
		if err := runner.WritePrivate(filepath.Join(abs, name), data); err != nil {
			return "", fmt.Errorf("writing %s: %w", filepath.Join(abs, name), err)
		}
	}
	return abs, nil
}

// pinnedImage is the image a by-hand run should use: the record's image
// at the applied record's digest when the applied record ran that image
// and knows its digest, else the record's image as written (pinned when
// it names a digest itself).
func pinnedImage(rec, applied *records.Record) (string, bool) {
	if strings.Contains(rec.Image, "@") && (applied == nil || applied.ImageDigest == "") {
		return rec.Image, true
	}
	if applied == nil || applied.ImageDigest == "" || applied.Image != rec.Image || rec.Image == "" {
		return rec.Image, false
	}
	digest := applied.ImageDigest
	if i := strings.LastIndex(digest, "@"); i >= 0 {
		digest = digest[i+1:]
	}
	repo, _, _ := strings.Cut(rec.Image, "@")
	if slash, colon := strings.LastIndex(repo, "/"), strings.LastIndex(repo, ":"); colon > slash {
		repo = repo[:colon]
	}
	return repo + "@" + digest, true
}

func (r *rendered) printSummary(out io.Writer, mismatch bool) {
	rec := r.rec
	fmt.Fprintf(out, "Inputs a destroy of %s %s/%s renders:\n", r.t.Kind, r.ns, r.t.Name)
	fmt.Fprintf(out, "  Record:      %s (%s)\n", rec.Name, r.why())
	fmt.Fprintf(out, "  Job:         %s\n", rec.Job)
	fmt.Fprintf(out, "  Inputs hash: %s\n", rec.InputsHash)
	switch {
	case r.stateFound && r.stateHash != "":
		fmt.Fprintf(out, "  State:       %s, inputs hash %s\n", state.SecretName(r.suffix), r.stateHash)
	case r.stateFound:
		fmt.Fprintf(out, "  State:       %s, without an inputs hash\n", state.SecretName(r.suffix))
	default:
		fmt.Fprintf(out, "Warning: there is no state Secret %s: the object never applied or its state is lost "+
			"(see the state-unreadable runbook); a destroy with these inputs finds nothing to destroy.\n", state.SecretName(r.suffix))
	}
	if r.keyUnreadable {
		fmt.Fprintf(out, "Note: you may not read the plan key Secret %s: inputs hashes of an earlier release (h2:) are compared as written, "+
			"so the record picked may differ from the manager's.\n", records.PlanKeyName(r.t.Kind, r.t.Name))
	}
	if mismatch {
		fmt.Fprintf(out, "Warning: the record's inputs hash %s is not the state's %s (the manager's DestroyInputsMismatch): "+
			"the state was last written with other inputs. The manager destroys with this record too; this is usually benign.\n", rec.InputsHash, r.stateHash)
	}
	fmt.Fprintf(out, "Wrote %s and %s (mode 0600; also copied under %s).\n", filepath.Join(r.dir, records.MainFile),
		filepath.Join(r.dir, records.TfvarsFile), filepath.Join(r.dir, "work", "root"))
	fmt.Fprintln(out, "  They hold sensitive values (bootstrap data, Secret-sourced variables): keep them private, delete the directory when done.")
	switch {
	case r.image == "":
		fmt.Fprintln(out, "Warning: the record names no image; replace IMAGE below with the module image the object ran.")
		r.image = "IMAGE"
	case r.pinned:
		fmt.Fprintf(out, "Image:       %s (pinned by digest)\n", r.image)
	default:
		fmt.Fprintf(out, "Image:       %s\nWarning: the image is not pinned (no digest recorded for it): the tag may now name other content than the Job ran.\n", r.image)
	}
	switch {
	case rec.Identity == "":
		fmt.Fprintln(out, "Identity:    none recorded: the Job ran without credentials.")
	case rec.IdentityKind == infrav1.IdentityKindSecret:
		r.credentialsRef = rec.Identity
		fmt.Fprintf(out, "Identity:    Secret %s of namespace %s (used as-is by the Job)\n", rec.Identity, r.ns)
	default:
		r.credentialsRef = credentials.MirrorName(rec.Identity)
		fmt.Fprintf(out, "Identity:    TerraformClusterIdentity %s; Jobs receive its credentials from the Secret %s of namespace %s\n", rec.Identity, r.credentialsRef, r.ns)
	}
}

// why says in words which row of the selection rule picked the record.
func (r *rendered) why() string {
	switch {
	case r.rec == r.attempt && r.rec.MayHaveApplied && (r.applied == nil || r.applied.Job != r.rec.Job):
		return "attempt record: its apply failed after it may have changed resources"
	case r.stateHash != "" && r.rec.InputsHash == r.stateHash && r.rec == r.applied:
		return "applied record: it carries the state's inputs hash"
	case r.stateHash != "" && r.rec.InputsHash == r.stateHash:
		return "attempt record: it carries the state's inputs hash"
	case r.rec == r.applied:
		return "applied record: the newest successful apply"
	}
	return "attempt record: there is no applied record"
}

// lockTimeout is the runner's default -lock-timeout (spec.jobs.lockTimeoutSeconds).
const lockTimeout = "-lock-timeout=300s"

// printReproduction prints the runbook's manual destroy: the runtime run
// directly in the module image (which holds no runner) the way the runner
// runs it, with the runner's environment, in /captf/work/root.
func (r *rendered) printReproduction(out io.Writer) {
	backend := []string{"-backend-config=secret_suffix=" + r.suffix, "-backend-config=namespace=" + r.ns,
		"-backend-config=config_path=/captf/kubeconfig", "-backend-config=labels=" + state.HCLMap(r.backendLabels)}
	initArgs := append([]string{"init", "-input=false", "-no-color", lockTimeout}, backend...)
	destroyArgs := []string{"destroy", "-input=false", "-no-color", lockTimeout, "-auto-approve", "-var-file=" + records.TfvarsFile}
	creds := filepath.Join(r.dir, "creds.env")

	fmt.Fprintln(out, "\n# Run the destroy by hand (stuck-destroy runbook). The module image holds no runner: these")
	fmt.Fprintln(out, "# lines run /captf/runtime in it directly, with the runner's environment and flags, in")
	fmt.Fprintln(out, "# /captf/work/root (the two files, with the module at /captf/module). The backend reaches the")
	fmt.Fprintln(out, "# API server through your kubeconfig: a single file whose current context carries its")
	fmt.Fprintln(out, "# credentials inline (no exec plugin); add --network host when it names a local address.")
	fmt.Fprintln(out, "# Drop the TF_CLI_CONFIG_FILE line when the image has no /captf/providers mirror.")
	if r.credentialsRef != "" {
		fmt.Fprintf(out, "# Fill %s (KEY=value lines) from the Secret %s first, for example:\n", creds, r.credentialsRef)
		fmt.Fprintf(out, "#   (umask 077; kubectl get secret %s -n %s -o go-template='{{range $k, $v := .data}}{{$k}}={{$v | base64decode}}{{\"\\n\"}}{{end}}' > %s)\n",
			shellQuote(r.credentialsRef), shellQuote(r.ns), shellQuote(creds))
		fmt.Fprintln(out, "# Keys whose values span lines (key files) reach Jobs as files: write them into a directory")
		fmt.Fprintln(out, "# and add -v <that directory>:/var/run/captf/credentials:ro.")
	}
	for _, engine := range []string{"docker", "podman"} {
		fmt.Fprintf(out, "\n# With %s:\n", engine)
		fmt.Fprintln(out, r.runLine(engine, initArgs, false))
		fmt.Fprintln(out, r.runLine(engine, destroyArgs, false))
	}
	fmt.Fprintln(out, "\n# To review first, run the destroy line with: plan -destroy -input=false -no-color "+lockTimeout+" -var-file="+records.TfvarsFile)
	fmt.Fprintln(out, "# The runtime's debug log (it may show sensitive values; Jobs never set TF_LOG):")
	fmt.Fprintln(out, "# "+strings.ReplaceAll(r.runLine("docker", destroyArgs, true), "\n", "\n# "))
}

// runLine is one container run of the runtime with args.
func (r *rendered) runLine(engine string, args []string, debug bool) string {
	user := `--user "$(id -u):$(id -g)"`
	if engine == "podman" {
		user = "--userns=keep-id"
	}
	q := shellQuote
	lines := []string{
		engine + " run --rm " + user + " --read-only --tmpfs /tmp --cap-drop ALL --security-opt no-new-privileges",
		"-v " + q(r.dir+":/captf/config:ro") + " -v " + q(filepath.Join(r.dir, "work")+":/captf/work") +
			` -v "${KUBECONFIG:-$HOME/.kube/config}:/captf/kubeconfig:ro"`,
		"-e TF_IN_AUTOMATION=1 -e TF_INPUT=0 -e HOME=/captf/work -e TMPDIR=/captf/work/tmp -e KUBE_NAMESPACE=" + q(r.ns) + " -e CHECKPOINT_DISABLE=1",
		"-e TF_DATA_DIR=/captf/work/.terraform",
		"-e TF_CLI_CONFIG_FILE=/captf/work/cli.tfrc",
	}
	if r.credentialsRef != "" {
		lines = append(lines, "--env-file "+q(filepath.Join(r.dir, "creds.env")))
	}
	if debug {
		lines = append(lines, "-e TF_LOG=DEBUG")
	}
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = q(a)
	}
	lines = append(lines, "-w /captf/work/root --entrypoint /captf/runtime "+q(r.image), strings.Join(quoted, " "))
	return strings.Join(lines, " \\\n  ")
}

// shellQuote quotes s for a POSIX shell unless it is plain.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@%+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
