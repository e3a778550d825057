package settled

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync/atomic"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"captf.io/captf/internal/checkpoint"
	"captf.io/captf/internal/livereport"
	"captf.io/captf/internal/metrics"
	"captf.io/captf/internal/readset"
)

// Checkpointer keeps the settled passes' records (Records) across a
// restart of the manager or a change of leader: it saves them in a
// checkpoint while the manager runs, and loads them when it starts, so
// that a restarted manager replays a settled object's reads against its
// caches instead of passing over it in full with a dozen live reads (a
// cold start bound by the client's rate limits otherwise).
//
// A loaded record is only ever a reason to skip a pass that would decide
// the same: it is replayed like any other, and the first read that
// returns something else since it was saved sends the object through a
// full pass. A checkpoint of another build or configuration of the
// manager (the Store's fingerprint) is not loaded at all.
type Checkpointer struct {
	// Records are the settled passes' records it saves and loads; View
	// replays them (the metadata caches a loaded record reads start with
	// the load).
	Records *Records
	View    *readset.View
	// Reports are the live reports' records (internal/livereport).
	Reports *livereport.Store
	// Config is the engine's configuration, JSON-encoded into the
	// fingerprint as it is when the Checkpointer starts; Now its clock.
	Config func() any
	Now    func() time.Time
	Store  checkpoint.Store
	// Live, when it has a Name, keeps the records the live reports cover
	// (livereport.Store) across a restart. Its Fingerprint is the records' format,
	// not the build: a record is what a condition said, whichever build
	// said it.
	Live checkpoint.Store
	// Build identifies the manager's build (its executable's digest): with
	// Config it is the checkpoint's fingerprint.
	Build string
	// Every is how often changed records are saved (default a minute);
	// the last change is saved when the manager stops.
	Every time.Duration
	// SyncWait bounds how long the start waits for the metadata caches the
	// loaded records read (default 30 s); a replay before they synced
	// reads live.
	SyncWait time.Duration
	// Expire is how long after the load a loaded record no pass has
	// replayed is kept (default 30 min): every object the manager
	// reconciles is passed once at its start, so a record still unused
	// then is of an object deleted, or moved out of the manager's scope,
	// while no manager ran.
	Expire time.Duration

	// loadedAt is when the load ended; lastSaved is the digest of the
	// last checkpoint saved.
	loadedAt  time.Time
	lastSaved [sha256.Size]byte
	// lastSavedLive is the digest of the live reports' records last saved.
	lastSavedLive [sha256.Size]byte
}

// NewCheckpointer returns a Checkpointer of records over store, for the
// manager build build. Records' replays wait for its load from then on:
// run it (it is a manager Runnable, started with the leader's
// controllers).
func NewCheckpointer(records *Records, store checkpoint.Store, build string) *Checkpointer {
	records.restored = make(chan struct{})
	return &Checkpointer{Records: records, Store: store, Build: build}
}

// Fingerprint is the fingerprint of a checkpoint saved by build with the
// engine configuration config: another build, or another configuration,
// may decide otherwise on the same reads, so they never load it.
func Fingerprint(build string, config any) (string, error) {
	doc, err := json.Marshal(config)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(append([]byte(build+"\x00"), doc...))
	return hex.EncodeToString(sum[:16]), nil
}

// checkpointDoc is what the memo checkpoint holds.
type checkpointDoc struct {
	Entries []checkpointEntry `json:"entries"`
}

type checkpointEntry struct {
	Kind      string          `json:"kind"`
	Namespace string          `json:"namespace"`
	Name      string          `json:"name"`
	Until     *time.Time      `json:"until,omitempty"`
	Reads     *readset.Record `json:"reads"`
	// Series are the object's per-object gauges (metrics.Series).
	Series map[string]float64 `json:"series,omitempty"`
}

// NeedLeaderElection: only the leader reconciles, so only it saves.
func (c *Checkpointer) NeedLeaderElection() bool { return true }

// Start loads the checkpoint, then saves the records whenever they
// changed, until ctx ends.
func (c *Checkpointer) Start(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx).WithName("checkpoint")
	var config any
	if c.Config != nil {
		config = c.Config()
	}
	fingerprint, err := Fingerprint(c.Build, config)
	if err != nil {
		close(c.Records.restored)
		return fmt.Errorf("fingerprinting the checkpoint: %w", err)
	}
	c.Store.Fingerprint = fingerprint
	c.loadLive(ctrl.LoggerInto(ctx, log))
	c.load(ctrl.LoggerInto(ctx, log))
	saves := []struct {
		changed           *atomic.Bool
		save              func(context.Context) error
		stopping, failing string
	}{
		{&c.Records.changed, c.save,
			"Saving the settled objects' records as the manager stops; the next start passes over the objects settled since the last save",
			"Saving the settled objects' records; retrying later"},
		{&c.Reports.Changed, c.saveLive,
			"Saving the live reports' records as the manager stops; the next manager leaves a live report it did not see begin until a Job reports",
			"Saving the live reports' records; retrying later"},
	}
	tick := time.NewTicker(orDefault(c.Every, time.Minute))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			for _, sv := range saves {
				if sv.changed.Swap(false) {
					if err := sv.save(sctx); err != nil {
						log.Error(err, sv.stopping)
					}
				}
			}
			cancel()
			return nil
		case <-tick.C:
			c.expire()
			for _, sv := range saves {
				if sv.changed.Swap(false) {
					if err := sv.save(ctx); err != nil {
						sv.changed.Store(true)
						log.Error(err, sv.failing)
					}
				}
			}
		}
	}
}

// loadLive reads the live reports' records of the checkpoint into
// Reports, before any pass of this manager looks at them.
func (c *Checkpointer) loadLive(ctx context.Context) {
	if c.Live.Name == "" {
		return
	}
	lctx, cancel := context.WithTimeout(ctx, orDefault(c.SyncWait, 30*time.Second))
	defer cancel()
	var doc livereport.Doc
	if !loadDoc(ctx, lctx, c.Live, &doc, "live reports' records", "a live report that began before this start stays until a Job reports") {
		return
	}
	loaded, refused := c.Reports.Take(doc)
	ctrl.LoggerFrom(ctx).Info("Loaded the live reports' records", "records", loaded, "refused", refused)
}

// saveLive writes the records the live reports cover, unless it is what
// the last save wrote.
func (c *Checkpointer) saveLive(ctx context.Context) error {
	if c.Live.Name == "" {
		return nil
	}
	return saveChanged(ctx, c.Live, c.Reports.Doc(), &c.lastSavedLive, "the live reports' records")
}

// saveChanged saves doc in store unless it encodes to what the save whose
// digest last holds wrote; what names the records for errors.
func saveChanged(ctx context.Context, store checkpoint.Store, doc any, last *[sha256.Size]byte, what string) error {
	data, err := json.Marshal(doc)
	if err != nil {
		return fmt.Errorf("encoding %s: %w", what, err)
	}
	sum := sha256.Sum256(data)
	if sum == *last {
		return nil
	}
	if err := store.Save(ctx, data); err != nil {
		return err
	}
	*last = sum
	return nil
}

// loadDoc reads store, within lctx, into doc. When the checkpoint is not
// usable it says so in the log, naming what (the records) and then (what
// the manager does without them), and returns false; also, silently, when
// ctx ends (the manager stops).
func loadDoc(ctx, lctx context.Context, store checkpoint.Store, doc any, what, then string) bool {
	log := ctrl.LoggerFrom(ctx)
	data, err := store.Load(lctx)
	switch {
	case ctx.Err() != nil:
		return false
	case errors.Is(err, checkpoint.ErrUnusable):
		log.Info("No "+what+" to load: "+then, "reason", err.Error())
		return false
	case err != nil:
		log.Error(err, "Loading the "+what+": "+then)
		return false
	}
	if err := json.Unmarshal(data, doc); err != nil {
		log.Info("The "+what+" do not decode: "+then, "reason", err.Error())
		return false
	}
	return true
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// load reads the checkpoint into the records and starts the
// metadata caches they read, waiting (within SyncWait) until they synced.
// Whatever happens, replays may go on once it returns.
func (c *Checkpointer) load(ctx context.Context) {
	defer func() {
		c.loadedAt = time.Now()
		close(c.Records.restored)
	}()
	log := ctrl.LoggerFrom(ctx)
	start := time.Now()
	lctx, cancel := context.WithTimeout(ctx, orDefault(c.SyncWait, 30*time.Second))
	defer cancel()
	var doc checkpointDoc
	if !loadDoc(ctx, lctx, c.Store, &doc, "settled objects' records", "every object's first pass runs in full") {
		return
	}
	now, loaded := c.now(), 0
	for _, en := range doc.Entries {
		if en.Reads == nil || en.Kind == "" || en.Name == "" || (en.Until != nil && !now.Before(*en.Until)) {
			continue // its pass runs in full
		}
		m := memo{reads: en.Reads, obj: metrics.Object{Kind: en.Kind, Namespace: en.Namespace, Name: en.Name}}
		if en.Until != nil {
			m.until = *en.Until
		}
		if err := c.View.Warm(m.reads); err != nil {
			log.V(1).Info("A settled object's record reads where no cache can start: its first pass runs in full", "kind", en.Kind, "namespace", en.Namespace, "name", en.Name, "reason", err.Error())
			continue
		}
		k := Key(en.Kind, client.ObjectKey{Namespace: en.Namespace, Name: en.Name})
		if _, had := c.Records.memos.LoadOrStore(k, m); had {
			continue // a pass already remembered a newer one
		}
		c.Records.restores.Store(k, orEmpty(en.Series))
		// A Forget while this loaded (its tombstone is stored before its
		// delete) wins.
		if _, gone := c.Records.tombstones.Load(k); gone {
			c.Records.restores.Delete(k)
			c.Records.memos.CompareAndDelete(k, m)
			continue
		}
		loaded++
	}
	synced := c.View.WaitForSync(lctx)
	log.Info("Loaded the settled objects' records", "records", loaded, "metadataCachesSynced", synced, "took", time.Since(start).Round(time.Millisecond).String())
}

func orEmpty(m map[string]float64) map[string]float64 {
	if m == nil {
		return map[string]float64{}
	}
	return m
}

// expire drops the loaded records no pass has replayed for Expire after
// the load, and the loaded live reports' records no pass has looked at:
// their objects were deleted, or left the manager's scope, while no
// manager ran.
func (c *Checkpointer) expire() {
	if c.loadedAt.IsZero() || time.Since(c.loadedAt) < orDefault(c.Expire, 30*time.Minute) {
		return
	}
	c.Reports.Expire()
	c.Records.restores.Range(func(k, _ any) bool {
		c.Records.Forget(k.(string))
		return true
	})
}

// save writes every record Records hold, with the objects' series,
// unless it is what the last save wrote.
func (c *Checkpointer) save(ctx context.Context) error {
	series := metrics.Series()
	var doc checkpointDoc
	c.Records.memos.Range(func(k, v any) bool {
		m := v.(memo)
		en := checkpointEntry{Kind: m.obj.Kind, Namespace: m.obj.Namespace, Name: m.obj.Name, Reads: m.reads, Series: series[m.obj]}
		if r, ok := c.Records.restores.Load(k); ok {
			en.Series = r.(map[string]float64) // loaded, not replayed yet: not published
		}
		if !m.until.IsZero() {
			en.Until = &m.until
		}
		doc.Entries = append(doc.Entries, en)
		return true
	})
	sort.Slice(doc.Entries, func(i, j int) bool {
		a, b := doc.Entries[i], doc.Entries[j]
		return a.Kind+"/"+a.Namespace+"/"+a.Name < b.Kind+"/"+b.Namespace+"/"+b.Name
	})
	return saveChanged(ctx, c.Store, doc, &c.lastSaved, "the settled objects' records")
}

// now is the Checkpointer's clock.
func (c *Checkpointer) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}
