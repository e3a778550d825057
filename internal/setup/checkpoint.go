package setup

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"sync"

	ctrl "sigs.k8s.io/controller-runtime"

	"captf.io/captf/internal/checkpoint"
	"captf.io/captf/internal/livereport"
	"captf.io/captf/internal/workspace"
)

// addCheckpoint keeps the engine's settled records across restarts in
// the manager's namespace ($POD_NAMESPACE; without it there is no
// checkpoint, and every object's first pass after a start runs in full).
// The checkpoint is named for the objects this manager reconciles (its
// --namespace and --watch-filter), and fingerprinted with the manager's
// executable and the engine's options: another build or configuration
// never loads it. The records the live reports cover go beside it, in a
// checkpoint fingerprinted with their format only: an upgrade keeps them.
func addCheckpoint(mgr ctrl.Manager, engine *workspace.Engine, o Options) error {
	ns := os.Getenv("POD_NAMESPACE")
	if ns == "" {
		return nil
	}
	exe, err := executableDigest()
	if err != nil {
		ctrl.Log.WithName("setup").Info("No checkpoint of the settled objects: the manager cannot read its own executable", "reason", err.Error())
		return nil
	}
	scope := sha256.Sum256([]byte(o.Namespace + "\x00" + o.WatchFilter))
	store := checkpoint.Store{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Namespace: ns, Name: "settled-" + hex.EncodeToString(scope[:5])}
	c := engine.NewCheckpointer(store, exe)
	c.Live = checkpoint.Store{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Namespace: ns, Name: "live-" + hex.EncodeToString(scope[:5]),
		Fingerprint: livereport.Format}
	c.Expire = 3 * o.SyncPeriod
	return mgr.Add(c)
}

var executable struct {
	once   sync.Once
	digest string
	err    error
}

// executableDigest is the SHA-256 of the running executable, read once.
func executableDigest() (string, error) {
	executable.once.Do(func() {
		path, err := os.Executable()
		if err != nil {
			executable.err = err
			return
		}
		f, err := os.Open(path)
		if err != nil {
			executable.err = err
			return
		}
		defer func() { _ = f.Close() }()
		h := sha256.New()
		if _, err := io.Copy(h, f); err != nil {
			executable.err = err
			return
		}
		executable.digest = hex.EncodeToString(h.Sum(nil))
	})
	return executable.digest, executable.err
}
