package setup

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/pflag"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/imagemeta"
	"captf.io/captf/internal/jobs"
	"captf.io/captf/internal/readset"
	"captf.io/captf/internal/reconcilers/identity"
	"captf.io/captf/internal/reconcilers/machinetemplate"
	"captf.io/captf/internal/reconcilers/workload"
	"captf.io/captf/internal/runnerrbac"
	"captf.io/captf/internal/webhooks"
	"captf.io/captf/internal/workspace"
)

// Scheme returns the kinds the manager reads and writes.
func Scheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, infrav1.AddToScheme, clusterv1.AddToScheme} {
		if err := add(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// LogFlags logs every flag once, as `FLAG: --name="value"` (printf-style,
// so the text format prints it unquoted).
func LogFlags(fs *pflag.FlagSet) {
	fs.VisitAll(func(f *pflag.Flag) {
		klog.Infof("FLAG: --%s=%q", f.Name, f.Value.String())
	})
}

// NewManager builds the manager with every controller and webhook.
func NewManager(cfg *rest.Config, o Options) (ctrl.Manager, error) {
	b, err := BuildManager(cfg, o)
	return b.Manager, err
}

// Built is a manager and the lifecycle engine inside it.
type Built struct {
	Manager ctrl.Manager
	// Engine runs the workload kinds' lifecycle; tests read its counters
	// and may tune its Options before the manager starts.
	Engine *workspace.Engine
}

// BuildManager builds the manager as NewManager does and hands out its engine.
// tweaks change the controller-runtime options last (tests use them, for
// example, to start several managers in one process).
func BuildManager(cfg *rest.Config, o Options, tweaks ...func(*ctrl.Options)) (Built, error) {
	if err := o.Validate(); err != nil {
		return Built{}, err
	}
	cfg = withRateLimits(cfg)
	s, err := Scheme()
	if err != nil {
		return Built{}, err
	}
	tlsOpts, err := o.TLSOptions()
	if err != nil {
		return Built{}, err
	}
	// Only CAPTF's Jobs are cached.
	managed := labels.SelectorFromSet(labels.Set{infrav1.ManagedLabel: "true"})
	// Of Secrets, only the credentials mirrors' metadata is cached (the
	// identity controller watches them); every other Secret read is live.
	mirrored := labels.SelectorFromSet(labels.Set{infrav1.MirroredLabel: "true"})
	secretMeta := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"}}
	cacheOpts := cache.Options{SyncPeriod: &o.SyncPeriod, ByObject: map[client.Object]cache.ByObject{
		&batchv1.Job{}: {Label: managed},
		secretMeta:     {Label: mirrored},
		// Only the pods of CAPTF's Jobs that have not ended, and of them
		// only what their watch reads (the workload controllers wake an
		// object whose module image cannot be pulled; a pod that ends
		// leaves the selection as a deletion, which wakes nothing, and
		// its Job's end wakes the object). Every pod a pass reads, it
		// reads live (Client.Cache.DisableFor below).
		&corev1.Pod{}: {Label: managed, Field: podsNotEnded, Transform: podAsWatched},
	}}
	if o.Namespace != "" {
		cacheOpts.DefaultNamespaces = map[string]cache.Config{o.Namespace: {}}
	}
	mo := ctrl.Options{
		Scheme:  s,
		Cache:   cacheOpts,
		Metrics: o.diagnosticsOptions(tlsOpts),
		// Secret data is never cached: every typed Secret read goes to the
		// API server, and watches of managed Secrets are metadata-only.
		Client:                        client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}, &corev1.Pod{}}}},
		HealthProbeBindAddress:        o.HealthAddr,
		PprofBindAddress:              o.ProfilerAddress,
		LeaderElection:                o.LeaderElect,
		LeaderElectionID:              o.leaderElectionID(),
		LeaderElectionNamespace:       os.Getenv("POD_NAMESPACE"),
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 &o.LeaderElectLeaseDuration,
		RenewDeadline:                 &o.LeaderElectRenewDeadline,
		RetryPeriod:                   &o.LeaderElectRetryPeriod,
		WebhookServer: webhook.NewServer(webhook.Options{
			Port: o.WebhookPort, CertDir: o.WebhookCertDir, CertName: o.WebhookCertName, KeyName: o.WebhookKeyName, TLSOpts: tlsOpts,
		}),
	}
	if o.CrashOnPanic {
		mo.Controller.RecoverPanic = ptr.To(false)
	}
	for _, tweak := range tweaks {
		tweak(&mo)
	}
	mgr, err := ctrl.NewManager(cfg, mo)
	if err != nil {
		return Built{}, fmt.Errorf("creating the manager: %w", err)
	}
	o.instrument(mgr)
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return Built{}, err
	}
	if err := mgr.AddReadyzCheck("webhook", mgr.GetWebhookServer().StartedChecker()); err != nil {
		return Built{}, err
	}
	// The cache holds every namespace's mirrors only when the manager
	// watches every namespace; a manager limited to one lists them live, so
	// that every shard writes the same status.namespaces.
	var mirrors client.Reader = mgr.GetCache()
	if o.Namespace != "" {
		mirrors = mgr.GetAPIReader()
	}
	if err := (&identity.Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Mirrors: mirrors}).SetupWithManager(mgr); err != nil {
		return Built{}, fmt.Errorf("setting up the identity controller: %w", err)
	}
	images := o.ImageLabels
	if images == nil {
		images = &imagemeta.Cached{Reader: imagemeta.Registry{}, TTL: 5 * time.Minute}
	}
	memo, err := memoView(mgr, o.Namespace, o.SyncPeriod)
	if err != nil {
		return Built{}, err
	}
	engine := &workspace.Engine{
		Client: readset.Client(mgr.GetClient()), APIReader: readset.Reader(mgr.GetAPIReader(), mgr.GetScheme()), Memo: memo,
		Recorder: mgr.GetEventRecorder("captf-manager"), Images: images,
		Options: workspace.Options{RunnerImage: o.RunnerImage, WatchFilter: o.WatchFilter, DriftDefault: o.DriftDefaultInterval, RunnerEvents: o.RunnerEvents,
			MaxActiveJobs: o.MaxActiveJobs, ClusterMaxActiveJobs: o.ClusterMaxActiveJobs, StateBackups: o.StateBackups,
			ClusterOperationGate: o.ClusterOperationGate, Evacuation: o.Namespace == ""},
	}
	if err := addCheckpoint(mgr, engine, o); err != nil {
		return Built{}, fmt.Errorf("setting up the settled objects' checkpoint: %w", err)
	}
	if err := workload.Setup(mgr, engine, workload.Options{Cluster: o.ClusterConcurrency, Machine: o.MachineConcurrency, MachinePool: o.MachinePoolConcurrency,
		WatchFilter: o.WatchFilter, Namespace: o.Namespace}); err != nil {
		return Built{}, fmt.Errorf("setting up the workload controllers: %w", err)
	}
	if err := (&machinetemplate.Reconciler{Images: images}).SetupWithManager(mgr, o.MachineTemplateConcurrency); err != nil {
		return Built{}, fmt.Errorf("setting up the TerraformMachineTemplate controller: %w", err)
	}
	if err := mgr.Add(&runnerrbac.Sweeper{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Cache: mgr.GetCache(),
		Namespace: o.Namespace, Period: o.SyncPeriod}); err != nil {
		return Built{}, fmt.Errorf("setting up the orphan sweep: %w", err)
	}
	if err := webhooks.SetupWebhooks(mgr, images); err != nil {
		return Built{}, fmt.Errorf("setting up the webhooks: %w", err)
	}
	return Built{Manager: mgr, Engine: engine}, nil
}

// podsNotEnded selects the pods that neither succeeded nor failed.
var podsNotEnded = fields.AndSelectors(
	fields.OneTermNotEqualSelector("status.phase", string(corev1.PodSucceeded)),
	fields.OneTermNotEqualSelector("status.phase", string(corev1.PodFailed)))

// podAsWatched keeps of a pod what the manager's pod watch reads: its
// name, namespace, Job (the job-name label) and the waiting reasons of
// its runner init container and module container (jobs.ImagePullFailing);
// not its spec, its images, its other
// labels, nor the rest of its status (the termination message holds the
// runner's result).
func podAsWatched(o any) (any, error) {
	pod, ok := o.(*corev1.Pod)
	if !ok {
		return o, nil
	}
	kept := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID, ResourceVersion: pod.ResourceVersion}}
	if job, ok := pod.Labels[batchv1.JobNameLabel]; ok {
		kept.Labels = map[string]string{batchv1.JobNameLabel: job}
	}
	kept.Status.InitContainerStatuses = waitingOf(pod.Status.InitContainerStatuses, jobs.RunnerContainer)
	kept.Status.ContainerStatuses = waitingOf(pod.Status.ContainerStatuses, jobs.SourceContainer)
	return kept, nil
}

// waitingOf keeps, of the status of the container named name, its name
// and waiting reason.
func waitingOf(statuses []corev1.ContainerStatus, name string) []corev1.ContainerStatus {
	for _, cs := range statuses {
		if cs.Name != name {
			continue
		}
		c := corev1.ContainerStatus{Name: cs.Name}
		if w := cs.State.Waiting; w != nil {
			c.State.Waiting = &corev1.ContainerStateWaiting{Reason: w.Reason}
		}
		return []corev1.ContainerStatus{c}
	}
	return nil
}

// memoView is what the engine replays a settled pass's reads against:
// the kinds the manager's informers hold (its controllers watch them, or
// the pass reads them through the cached client: Namespaces,
// ServiceAccounts, RoleBindings), so that a replay reads the informer the
// pass read; and a metadata cache of the Secrets and Leases (which the
// pass reads live) of each namespace a settled pass read, started with
// its first record there and stopped after three sync periods unused (a
// settled namespace is replayed at every resync).
func memoView(mgr ctrl.Manager, namespace string, syncPeriod time.Duration) (*readset.View, error) {
	kinds := func(objs ...client.Object) (map[schema.GroupVersionKind]bool, []schema.GroupVersionKind, error) {
		set, list := map[schema.GroupVersionKind]bool{}, []schema.GroupVersionKind{}
		for _, o := range objs {
			gvk, err := apiutil.GVKForObject(o, mgr.GetScheme())
			if err != nil {
				return nil, nil, err
			}
			set[gvk], list = true, append(list, gvk)
		}
		return set, list, nil
	}
	cached, _, err := kinds(&infrav1.TerraformCluster{}, &infrav1.TerraformMachine{}, &infrav1.TerraformMachinePool{},
		&infrav1.TerraformClusterIdentity{}, &infrav1.TerraformPlan{}, &clusterv1.Cluster{}, &clusterv1.Machine{}, &clusterv1.MachinePool{}, &batchv1.Job{},
		&corev1.Namespace{}, &corev1.ServiceAccount{}, &rbacv1.RoleBinding{})
	if err != nil {
		return nil, err
	}
	metaKinds, metaList, err := kinds(&corev1.Secret{}, &coordinationv1.Lease{})
	if err != nil {
		return nil, err
	}
	metadata := &readset.Namespaces{Config: mgr.GetConfig(), HTTPClient: mgr.GetHTTPClient(), Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper(),
		Kinds: metaList, Only: namespace, Idle: 3 * syncPeriod}
	if err := mgr.Add(metadata); err != nil {
		return nil, err
	}
	return &readset.View{Cache: mgr.GetCache(), Cached: cached, Metadata: metadata, MetadataKinds: metaKinds,
		Live: mgr.GetAPIReader(), Scheme: mgr.GetScheme()}, nil
}

// Run builds the manager and runs it until ctx ends.
func Run(ctx context.Context, cfg *rest.Config, o Options) error {
	log := ctrl.Log.WithName("setup")
	for _, env := range []string{"POD_NAMESPACE", "SERVICE_ACCOUNT_NAME"} {
		if os.Getenv(env) == "" {
			log.Info("WARNING: environment variable unset; the manager cannot tell its own ServiceAccount, so the TerraformMachine webhook will refuse its providerID writes", "variable", env)
		}
	}
	mgr, err := NewManager(cfg, o)
	if err != nil {
		return err
	}
	b := o.Build()
	log.Info("Starting the manager", "version", b.Version, "commit", b.Commit, "goVersion", b.GoVersion, "contract", b.Contract)
	return mgr.Start(ctx)
}

// The manager's client-side rate limits, when its configuration sets none.
// client-go's own defaults (5 requests per second, bursts of 10) hold
// back a manager given --kubeconfig, and controller-runtime's in-cluster
// ones (20, 30) a manager with more than a few objects: Secrets are never
// cached, so every pass reads its state and records live. The API
// server's priority and fairness still protects it.
const (
	DefaultQPS   = 50
	DefaultBurst = 100
)

// withRateLimits returns cfg, or a copy with the default rate limits when
// it sets none.
func withRateLimits(cfg *rest.Config) *rest.Config {
	if cfg.QPS != 0 || cfg.RateLimiter != nil {
		return cfg
	}
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = DefaultQPS, DefaultBurst
	return cfg
}
