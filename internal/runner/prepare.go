package runner

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"captf.io/captf/pkg/state"
)

// Names of the generated root's files.
const (
	MainFile    = "main.tf.json"
	TfvarsFile  = "terraform.tfvars.json"
	PlanFile    = "captf.tfplan"
	RestoreFile = "restore.tfstate"
)

// restoreRoot is the root of a restore: the kubernetes backend alone, which
// init's -backend-config flags complete. It calls no module and declares no
// variable; state push and state list need neither.
const restoreRoot = `{"terraform":{"backend":{"kubernetes":{}}}}` + "\n"

// MinPlanKeyBytes is the shortest plan key the runner accepts.
const MinPlanKeyBytes = 32

// prepared is what the runner set up before the first command.
type prepared struct {
	root     string
	env      EnvRewrite
	mirror   bool
	redactor *Redactor
	planKey  []byte
}

// prepare builds the generated root, the CLI config and the environment.
func prepare(o Options, environ []string) (*prepared, error) {
	p := &prepared{root: filepath.Join(o.Workdir, "root"), redactor: NewRedactor()}
	if err := os.MkdirAll(p.root, 0o700); err != nil {
		return nil, fmt.Errorf("creating the generated root: %w", err)
	}
	if o.Op == OpRestore {
		if err := writeRestoreRoot(o, p.root); err != nil {
			return nil, err
		}
	} else if err := copyConfig(o.Config, p.root); err != nil {
		return nil, err
	}
	if _, written, err := WriteCLIConfig(o.Workdir, o.Providers); err != nil {
		return nil, err
	} else {
		p.mirror = written
	}
	p.env = RewriteEnv(environ, o.Workdir, p.mirror)
	if p.env.TmpdirDefaulted {
		if err := os.MkdirAll(p.env.Tmpdir, 0o700); err != nil {
			return nil, fmt.Errorf("creating TMPDIR: %w", err)
		}
	}
	// The identity's values are secret whatever their name or length, and
	// so are the values of the object's spec.jobs.env (--redact-env).
	p.redactor.AddCredentials(credentials(o.Credentials))
	for _, name := range o.RedactEnv {
		if value, ok := lookupEnv(environ, name); ok {
			p.redactor.Add(value)
		}
	}
	if o.Op != OpRestore {
		addInputSecrets(p.redactor, p.root)
	}
	if o.needsPlanKey() {
		key, err := os.ReadFile(o.PlanKeyFile)
		if err != nil {
			return nil, fmt.Errorf("the plan key cannot be read (%w); a plan is never fingerprinted without it", err)
		}
		if len(key) < MinPlanKeyBytes {
			return nil, fmt.Errorf("the plan key %s holds %d bytes; at least %d are required", o.PlanKeyFile, len(key), MinPlanKeyBytes)
		}
		p.planKey = key
	}
	return p, nil
}

// copyConfig copies the top-level files of the per-run Secret's mount into
// the root, mode 0600. A Secret volume keeps its data behind "..data"
// entries and symlinks; those and any directory are skipped.
func copyConfig(config, root string) error {
	entries, err := os.ReadDir(config)
	if err != nil {
		return fmt.Errorf("reading the run's inputs in %s: %w", config, err)
	}
	copied := map[string]bool{}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "..") {
			continue
		}
		src := filepath.Join(config, e.Name())
		st, err := os.Stat(src)
		if err != nil || !st.Mode().IsRegular() {
			continue
		}
		data, err := os.ReadFile(src)
		if err != nil {
			return fmt.Errorf("reading %s: %w", src, err)
		}
		if err := writePrivate(filepath.Join(root, e.Name()), data); err != nil {
			return err
		}
		copied[e.Name()] = true
	}
	for _, f := range []string{MainFile, TfvarsFile} {
		if !copied[f] {
			return fmt.Errorf("the run's inputs in %s lack %s", config, f)
		}
	}
	return nil
}

func writeRestoreRoot(o Options, root string) error {
	if err := writePrivate(filepath.Join(root, MainFile), []byte(restoreRoot)); err != nil {
		return err
	}
	if err := writePrivate(filepath.Join(root, TfvarsFile), []byte("{}\n")); err != nil {
		return err
	}
	state, err := assembleBackup(filepath.Join(o.Config, "restore"), o.RestoreChunks)
	if err != nil {
		return err
	}
	return writePrivate(filepath.Join(root, RestoreFile), state)
}

func writePrivate(path string, data []byte) error {
	if err := WritePrivate(path, data); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// credentials reads the identity's mirror mount as NAME=value entries.
func credentials(dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "..") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err == nil {
			out = append(out, e.Name()+"="+string(data))
		}
	}
	return out
}

// addInputSecrets registers the bootstrap data and the values of the
// variables the root declares sensitive.
func addInputSecrets(r *Redactor, root string) {
	var vars map[string]json.RawMessage
	if data, err := os.ReadFile(filepath.Join(root, TfvarsFile)); err != nil || json.Unmarshal(data, &vars) != nil {
		return
	}
	var main struct {
		Variable map[string]struct {
			Sensitive bool `json:"sensitive"`
		} `json:"variable"`
	}
	if data, err := os.ReadFile(filepath.Join(root, MainFile)); err == nil {
		_ = json.Unmarshal(data, &main)
	}
	for name, raw := range vars {
		var s string
		isString := json.Unmarshal(raw, &s) == nil
		switch {
		case name == "bootstrap_data" && isString:
			r.AddBootstrapData(s)
		case !main.Variable[name].Sensitive:
		case isString:
			r.Add(s)
		default:
			r.Add(string(raw))
		}
	}
}

// maxChunkFileBytes bounds one backup chunk file: a Secret holds at most
// 1 MiB, so anything much larger is not a chunk.
const maxChunkFileBytes = 2 << 20

// assembleBackup reassembles a backup's compressed chunks (files 0..n-1 of
// dir) with the state reader, under its limits (at most 32 chunks and
// 64 MiB decompressed, version 4, unencrypted), and returns the state JSON.
func assembleBackup(dir string, chunks int) ([]byte, error) {
	if chunks > state.MaxChunks {
		return nil, fmt.Errorf("the backup has %d chunks, more than the %d a state may have", chunks, state.MaxChunks)
	}
	const suffix = "restore"
	secrets := make([]corev1.Secret, 0, chunks)
	for i := range chunks {
		path := filepath.Join(dir, strconv.Itoa(i))
		st, err := os.Stat(path)
		if err != nil {
			return nil, fmt.Errorf("backup chunk %d is missing: %w", i, err)
		}
		if st.Size() > maxChunkFileBytes {
			return nil, fmt.Errorf("backup chunk %d holds %d bytes; a chunk holds at most 1 MiB", i, st.Size())
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("reading backup chunk %d: %w", i, err)
		}
		name := state.SecretName(suffix)
		if i > 0 {
			name = state.ChunkName(suffix, i)
		}
		secrets = append(secrets, corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string][]byte{state.DataKey: data}})
	}
	_, raw, err := state.DecodeRaw(suffix, secrets)
	if err != nil {
		return nil, fmt.Errorf("the backup cannot be restored: %w", err)
	}
	return raw, nil
}

// lookupEnv finds name in environ (NAME=value entries), the last entry
// winning as in a process environment.
func lookupEnv(environ []string, name string) (string, bool) {
	value, found := "", false
	for _, entry := range environ {
		if k, v, ok := strings.Cut(entry, "="); ok && k == name {
			value, found = v, true
		}
	}
	return value, found
}
