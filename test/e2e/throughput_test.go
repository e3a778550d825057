package e2e

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/devenv"
	"captf.io/captf/internal/localnode"
	"captf.io/captf/internal/records"
	"captf.io/captf/internal/runner"
	"captf.io/captf/internal/setup"
	"captf.io/captf/internal/test/envtest"
	"captf.io/captf/pkg/state"
)

// Environment variables of BenchmarkProvisioningThroughput (make scale
// sets CAPTF_SCALE; the others override its defaults).
const (
	throughputMachinesEnv = "CAPTF_SCALE_THROUGHPUT_MACHINES"
	throughputPlacesEnv   = "CAPTF_SCALE_THROUGHPUT_PODS"
	// throughputProfileEnv, when set, is where a CPU profile of each
	// part's manager goes (make scale's CAPTF_SCALE_PROFILE_DIR).
	throughputProfileEnv = "CAPTF_SCALE_PROFILE_DIR"
)

const (
	defaultThroughputMachines = 200
	// defaultThroughputPlaces is how many pods the local node runs at
	// once, and so how many runs go side by side in every part: 200 tofu
	// applies at once would need about 28 GiB, more than this machine.
	defaultThroughputPlaces = 8
	// throughputGoal is target 1's: CAPTF's time over the direct runs'.
	throughputGoal = 1.3
)

// BenchmarkProvisioningThroughput is target 1 of make scale. A local
// environment (the real Cluster API manager, kube-controller-manager, the
// local node running the real runner in-process, at most 8 pods at once:
// CAPTF_SCALE_THROUGHPUT_PODS) and a CAPTF manager run as `captf-dev
// manager` in a process of its own:
//
//   - unlimited: with --max-active-jobs=0 and --cluster-max-active-jobs=0,
//     a MachineDeployment of the quickstart's cluster is scaled from 0 to
//     200 machines (CAPTF_SCALE_THROUGHPUT_MACHINES); timed from the scale
//     to the last TerraformMachine provisioned;
//   - direct: the same 200 runner invocations (the module, the runtime,
//     the providers and the inputs each machine's apply ran with, read
//     from its applied record), called directly in this process, as many
//     at a time as the node has places, each on a state of its own;
//   - defaults: the first part again with the manager's default Job
//     limits, in a new namespace.
//
// Each part's time over the direct one's is a ratio; the first is the
// target. Every machine must be provisioned by exactly one apply Job; the
// default limits' queue is reported by how far its Jobs came out of the
// machines' creation order and the longest wait.
func BenchmarkProvisioningThroughput(b *testing.B) {
	if os.Getenv("CAPTF_SCALE") == "" {
		b.Skip("CAPTF_SCALE is not set: make scale runs this benchmark (minutes)")
	}
	// The benchmark's informers log nowhere.
	ctrllog.SetLogger(logr.Discard())
	tools := envtest.RequireTools(b, "etcd", "kube-apiserver", "kube-controller-manager", "capi-manager", "tofu")
	machines, places := envCount(b, throughputMachinesEnv, defaultThroughputMachines), envCount(b, throughputPlacesEnv, defaultThroughputPlaces)
	ctx := b.Context()
	root, err := envtest.RepoRoot()
	if err != nil {
		b.Fatal(err)
	}
	// Short, for the in-process node's unix sockets.
	dir, err := os.MkdirTemp("", "tput-")
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = os.RemoveAll(dir) }()
	stateDir := filepath.Join(dir, "cache", "captf", "dev")
	// The managers' XDG_CACHE_HOME is dir/cache: its image store is this
	// machine's, as the environment's.
	shareMachineCaches(b, filepath.Join(dir, "cache"))
	throughputProgress("starting the environment (%d node places)", places)
	env, err := devenv.Up(ctx, devenv.Options{Tools: tools, Repo: root, Kubeconfig: filepath.Join(stateDir, "kubeconfig"), StateDir: stateDir,
		Log: io.Discard, WithoutManager: true, NodeMode: localnode.ModeInProcess, NodeMaxPods: places})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = env.Down() }()
	t := &throughput{b: b, env: env, root: root, dir: dir, tools: tools, bin: buildDev(b, ctx, root),
		procEnv: append(os.Environ(), "XDG_CACHE_HOME="+filepath.Join(dir, "cache"), "KUBECONFIG=")}
	for i := range b.N {
		unlimited := t.scaleUp(ctx, fmt.Sprintf("tput-unlimited-%d", i), machines, "--max-active-jobs=0", "--cluster-max-active-jobs=0")
		direct, directCPU := t.direct(ctx, fmt.Sprintf("tput-direct-%d", i), unlimited.inputs, places)
		defaults := t.scaleUp(ctx, fmt.Sprintf("tput-defaults-%d", i), machines)
		ratio, defaultsRatio := unlimited.took.Seconds()/direct.Seconds(), defaults.took.Seconds()/direct.Seconds()
		b.ReportMetric(ratio, "captf/direct")
		b.ReportMetric(defaultsRatio, "defaults/direct")
		b.ReportMetric(direct.Seconds(), "direct-s")
		d := defaults.order
		b.Logf("CPU of the machine: %s with no Job limit (the manager %s; %s), %s direct, %s with the default limits (the manager %s; %s); no limit's Jobs in creation order for %.1f%% of pairs",
			unlimited.cpu.Round(time.Second), unlimited.manager.Round(time.Second), unlimited.componentsLine(), directCPU.Round(time.Second),
			defaults.cpu.Round(time.Second), defaults.manager.Round(time.Second), defaults.componentsLine(), unlimited.order.inOrder*100)
		verdict(1, fmt.Sprintf("%d machines of a MachineDeployment scaled from 0, %d runs at a time: %s with no Job limit, %s for the same runner invocations called directly: ratio %.2f (machine CPU %.0f s against %.0f s, the manager's %.0f s); with the default limits %s, ratio %.2f, its Jobs in the machines' creation order for %.1f%% of pairs, longest wait from a machine to its Job %s (mean %s); each machine applied once",
			machines, places, unlimited.took.Round(time.Second), direct.Round(time.Second), ratio, unlimited.cpu.Seconds(), directCPU.Seconds(), unlimited.manager.Seconds(),
			defaults.took.Round(time.Second), defaultsRatio, d.inOrder*100, d.longest.Round(time.Second), d.mean.Round(time.Second)),
			fmt.Sprintf("ratio <= %.1f", throughputGoal), ratio <= throughputGoal)
	}
}

// verdict prints the line make scale ends with for a target.
func verdict(target int, figure, goal string, met bool) {
	word := "missed"
	if met {
		word = "met"
	}
	fmt.Printf("target %d: %s (goal %s) %s\n", target, figure, goal, word)
}

func throughputProgress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s throughput: %s\n", time.Now().Format(time.TimeOnly), fmt.Sprintf(format, args...))
}

func envCount(b *testing.B, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		b.Fatalf("%s=%q: want a positive number", name, v)
	}
	return n
}

// throughput is the benchmark's environment and the captf-dev it runs
// the managers with.
type throughput struct {
	b                     *testing.B
	env                   *devenv.Env
	root, dir, tools, bin string
	procEnv               []string
}

// scaled is what one part that scales a MachineDeployment measured.
type scaled struct {
	took   time.Duration
	inputs []appliedInputs
	order  queueOrder
	// cpu is the whole machine's CPU time over the part, manager the CAPTF
	// manager process's; components the control plane's and Cluster API's
	// processes', by command name.
	cpu, manager time.Duration
	components   map[string]time.Duration
}

// appliedInputs are the files an apply's runner read: the generated root
// and the tfvars.
type appliedInputs struct{ main, tfvars []byte }

// queueOrder is how a part's apply Jobs followed the machines' creation:
// the share of pairs of machines whose Jobs came in the machines' order,
// and the waits from a machine's creation to its Job.
type queueOrder struct {
	inOrder       float64
	longest, mean time.Duration
}

// scaleUp runs a manager with args in a process of its own, creates the
// quickstart's cluster and a MachineDeployment of no machine in namespace
// ns, and once the cluster is provisioned scales it to machines and waits
// until all are provisioned.
func (t *throughput) scaleUp(ctx context.Context, ns string, machines int, args ...string) scaled {
	b := t.b
	var s scaled
	profiles := os.Getenv(throughputProfileEnv)
	var pprofAddr string
	if profiles != "" {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		pprofAddr = l.Addr().String()
		_ = l.Close()
		args = append(args, "--profiler-address="+pprofAddr)
	}
	m := startDev(b, "manager-"+ns, t.bin, t.root, t.dir, t.procEnv, append([]string{"manager"}, args...)...)
	defer m.killGroup()
	m.waitLine("ready", 2*time.Minute)
	seen := t.watch(ctx, ns)
	objs, err := throughputObjects(t.root, ns)
	if err != nil {
		b.Fatal(err)
	}
	if err := devenv.Create(ctx, t.env.Client, objs); err != nil {
		b.Fatal(err)
	}
	throughputProgress("%s: waiting for the cluster", ns)
	t.waitProvisioned(ctx, ns, &infrav1.TerraformClusterList{}, 1, 5*time.Minute)
	throughputProgress("%s: scaling the MachineDeployment to %d", ns, machines)
	md := &unstructured.Unstructured{}
	md.SetGroupVersionKind(clusterv1.GroupVersion.WithKind("MachineDeployment"))
	md.SetNamespace(ns)
	md.SetName("md")
	start, cpu0, mgr0, comp0 := time.Now(), machineCPU(b), processCPU(b, m.cmd.Process.Pid), componentsCPU(b)
	patch := fmt.Sprintf(`{"spec":{"replicas":%d}}`, machines)
	if err := t.env.Client.Patch(ctx, md, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		b.Fatal(err)
	}
	var profiled sync.WaitGroup
	if profiles != "" {
		profiled.Go(func() { t.profile(ctx, pprofAddr, filepath.Join(profiles, ns+"-manager.cpu.pprof")) })
	}
	s.took = t.waitProvisioned(ctx, ns, &infrav1.TerraformMachineList{}, machines, time.Hour).Sub(start)
	profiled.Wait()
	s.cpu, s.manager, s.components = machineCPU(b)-cpu0, processCPU(b, m.cmd.Process.Pid)-mgr0, componentsCPU(b)
	for name, v := range comp0 {
		s.components[name] -= v
	}
	throughputProgress("%s: %d machines provisioned in %s", ns, machines, s.took.Round(time.Second))
	if err := m.stop(time.Minute); err != nil {
		b.Logf("stopping the manager of %s: %v", ns, err)
	}
	var tms infrav1.TerraformMachineList
	if err := t.env.Client.List(ctx, &tms, client.InNamespace(ns)); err != nil {
		b.Fatal(err)
	}
	names := make([]string, 0, len(tms.Items))
	for _, tm := range tms.Items {
		names = append(names, tm.Name)
	}
	if len(names) != machines {
		b.Fatalf("%d TerraformMachines in %s, want %d", len(names), ns, machines)
	}
	if s.order, err = seen.order(names); err != nil {
		b.Fatalf("%v\n%s", err, t.jobsOf(ctx, ns))
	}
	for _, tm := range tms.Items {
		sec := &corev1.Secret{}
		if err := t.env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: records.AppliedName(state.KindMachine, tm.Name)}, sec); err != nil {
			b.Fatalf("the applied record of %s: %v", tm.Name, err)
		}
		s.inputs = append(s.inputs, appliedInputs{main: sec.Data[records.MainFile], tfvars: sec.Data[records.TfvarsFile]})
	}
	return s
}

// jobsOf lists the Jobs of namespace ns and the Job each machine's status
// names, for a failure.
func (t *throughput) jobsOf(ctx context.Context, ns string) string {
	var out []string
	var jobs batchv1.JobList
	if err := t.env.Client.List(ctx, &jobs, client.InNamespace(ns)); err != nil {
		return err.Error()
	}
	for _, j := range jobs.Items {
		var owners []string
		for _, ref := range j.OwnerReferences {
			owners = append(owners, ref.Kind+"/"+ref.Name)
		}
		out = append(out, fmt.Sprintf("Job %s op=%s owners=%v created=%s", j.Name, j.Labels[infrav1.OperationLabel], owners, j.CreationTimestamp.Format(time.TimeOnly)))
	}
	var tms infrav1.TerraformMachineList
	if err := t.env.Client.List(ctx, &tms, client.InNamespace(ns)); err != nil {
		return err.Error()
	}
	for _, tm := range tms.Items {
		if tm.Status.LastRun != nil {
			out = append(out, fmt.Sprintf("TerraformMachine %s lastRun.job=%s", tm.Name, tm.Status.LastRun.Job))
		}
	}
	return strings.Join(out, "\n")
}

// profile saves a CPU profile of the manager's first two minutes of
// provisioning at path; a failure is logged.
func (t *throughput) profile(ctx context.Context, addr, path string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/debug/pprof/profile?seconds=120", nil)
	if err == nil {
		var resp *http.Response
		if resp, err = http.DefaultClient.Do(req); err == nil {
			defer func() { _ = resp.Body.Close() }()
			var data []byte
			if data, err = io.ReadAll(resp.Body); err == nil {
				err = errors.Join(os.MkdirAll(filepath.Dir(path), 0o755), os.WriteFile(path, data, 0o644))
			}
		}
	}
	if err != nil {
		t.b.Logf("profiling the manager: %v", err)
	}
}

// throughputObjects are the quickstart's credentials, identity, Cluster
// and TerraformCluster, and a MachineDeployment of no machine from a
// TerraformMachineTemplate of the noop-machine module on OpenTofu, in
// namespace ns.
func throughputObjects(root, ns string) ([]*unstructured.Unstructured, error) {
	quickstart, err := devenv.ReadManifestDir(filepath.Join(root, "examples", "quickstart"))
	if err != nil {
		return nil, err
	}
	md, err := devenv.ReadManifestDir(filepath.Join(root, "test", "e2e", "testdata", "machinedeployment"))
	if err != nil {
		return nil, err
	}
	namespace := &unstructured.Unstructured{}
	namespace.SetAPIVersion("v1")
	namespace.SetKind("Namespace")
	namespace.SetName(ns)
	out := []*unstructured.Unstructured{namespace}
	for _, o := range slices.Concat(quickstart, md) {
		var err error
		switch o.GetKind() {
		case "Namespace":
			continue
		case "Machine", "TerraformMachine", "MachinePool", "TerraformMachinePool":
			continue
		case "Secret":
			if o.GetNamespace() != "captf-system" && o.GetName() != "md-bootstrap" {
				continue
			}
			if o.GetNamespace() == "captf-system" {
				o.SetName(ns + "-credentials")
				break
			}
			o.SetNamespace(ns)
		case "TerraformClusterIdentity":
			o.SetName(ns)
			err = errors.Join(unstructured.SetNestedField(o.Object, ns+"-credentials", "spec", "secretRef", "name"),
				unstructured.SetNestedStringSlice(o.Object, []string{ns}, "spec", "allowedNamespaces", "list"))
		case "TerraformCluster":
			o.SetNamespace(ns)
			err = unstructured.SetNestedField(o.Object, ns, "spec", "identityRef", "name")
		case "TerraformMachineTemplate":
			o.SetNamespace(ns)
			err = unstructured.SetNestedField(o.Object, devenv.ExampleImage("noop-machine", "tofu"), "spec", "template", "spec", "source", "image")
		case "MachineDeployment":
			o.SetNamespace(ns)
			err = unstructured.SetNestedField(o.Object, int64(0), "spec", "replicas")
		default:
			o.SetNamespace(ns)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, nil
}

// waitProvisioned waits until n objects of list's kind in ns are
// provisioned, and returns when the poll saw it (each second: the parts
// take minutes).
func (t *throughput) waitProvisioned(ctx context.Context, ns string, list client.ObjectList, n int, timeout time.Duration) time.Time {
	var done time.Time
	var count int
	err := wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		if err := t.env.Client.List(ctx, list, client.InNamespace(ns)); err != nil {
			return false, nil
		}
		count = 0
		switch l := list.(type) {
		case *infrav1.TerraformMachineList:
			for i := range l.Items {
				if ptr.Deref(l.Items[i].Status.Initialization.Provisioned, false) {
					count++
				}
			}
		case *infrav1.TerraformClusterList:
			for i := range l.Items {
				if ptr.Deref(l.Items[i].Status.Initialization.Provisioned, false) {
					count++
				}
			}
		}
		done = time.Now()
		return count >= n, nil
	})
	if err != nil {
		t.b.Fatalf("%d of %d %T provisioned in %s after %s: %v", count, n, list, ns, timeout, err)
	}
	return done
}

// applyWatch times, on arrival, each TerraformMachine's creation and its
// apply Jobs'.
type applyWatch struct {
	mu       sync.Mutex
	machines map[string]time.Time
	jobs     map[string]bool
	applies  map[string][]time.Time
}

// watch starts informers of namespace ns's TerraformMachines and Jobs.
func (t *throughput) watch(ctx context.Context, ns string) *applyWatch {
	w := &applyWatch{machines: map[string]time.Time{}, jobs: map[string]bool{}, applies: map[string][]time.Time{}}
	cfg, err := clientcmd.BuildConfigFromFlags("", t.env.Kubeconfig)
	if err != nil {
		t.b.Fatal(err)
	}
	s, err := setup.Scheme()
	if err != nil {
		t.b.Fatal(err)
	}
	c, err := cache.New(cfg, cache.Options{Scheme: s, DefaultNamespaces: map[string]cache.Config{ns: {}}})
	if err != nil {
		t.b.Fatal(err)
	}
	for obj, see := range map[client.Object]func(any){&infrav1.TerraformMachine{}: w.machine, &batchv1.Job{}: w.job} {
		inf, err := c.GetInformer(ctx, obj, cache.BlockUntilSynced(false))
		if err != nil {
			t.b.Fatal(err)
		}
		if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: see, UpdateFunc: func(_, o any) { see(o) }}); err != nil {
			t.b.Fatal(err)
		}
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		t.b.Fatal("the benchmark's informers did not sync")
	}
	return w
}

func (w *applyWatch) machine(o any) {
	now := time.Now()
	tm, ok := o.(*infrav1.TerraformMachine)
	if !ok {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, known := w.machines[tm.Name]; !known {
		w.machines[tm.Name] = now
	}
}

func (w *applyWatch) job(o any) {
	now := time.Now()
	j, ok := o.(*batchv1.Job)
	if !ok || j.Labels[infrav1.OperationLabel] != string(infrav1.OperationApply) {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.jobs[j.Name] {
		return
	}
	w.jobs[j.Name] = true
	for _, ref := range j.OwnerReferences {
		if ref.Kind == state.KindMachine {
			w.applies[ref.Name] = append(w.applies[ref.Name], now)
		}
	}
}

// order checks that each of the machines named (those there at the end:
// Cluster API may delete a TerraformMachine it made when the Machine's
// creation fails, before any Job) had exactly one apply Job, and measures
// how the Jobs followed the machines' creation.
func (w *applyWatch) order(names []string) (queueOrder, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	type machine struct{ created, job time.Time }
	var ms []machine
	var total time.Duration
	var q queueOrder
	for _, name := range names {
		created, ok := w.machines[name]
		if !ok {
			return q, fmt.Errorf("machine %s was never seen created", name)
		}
		applies := w.applies[name]
		if len(applies) != 1 {
			return q, fmt.Errorf("machine %s was applied by %d Jobs, want 1", name, len(applies))
		}
		ms = append(ms, machine{created, applies[0]})
		wait := applies[0].Sub(created)
		total += wait
		q.longest = max(q.longest, wait)
	}
	q.mean = total / time.Duration(len(ms))
	var pairs, kept int
	for i := range ms {
		for j := range ms {
			if ms[i].created.Before(ms[j].created) {
				pairs++
				if !ms[j].job.Before(ms[i].job) {
					kept++
				}
			}
		}
	}
	q.inOrder = 1
	if pairs > 0 {
		q.inOrder = float64(kept) / float64(pairs)
	}
	return q, nil
}

// direct calls the runner in this process for each of inputs, places at a
// time, each on a state of its own in namespace ns, as the node's
// in-process runs do, and returns how long all took and the machine's CPU
// time over it.
func (t *throughput) direct(ctx context.Context, ns string, inputs []appliedInputs, places int) (took, cpu time.Duration) {
	b := t.b
	if err := t.env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		b.Fatal(err)
	}
	module := filepath.Join(t.root, "examples", "modules", "noop-machine")
	throughputProgress("%s: %d runner invocations, %d at a time", ns, len(inputs), places)
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, places)
	start, cpu0 := time.Now(), machineCPU(b)
	for p := range places {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(inputs) && ctx.Err() == nil; i = int(next.Add(1) - 1) {
				if err := t.directApply(ns, module, i, inputs[i]); err != nil {
					errs[p] = err
					return
				}
			}
		})
	}
	wg.Wait()
	took, cpu = time.Since(start), machineCPU(b)-cpu0
	if err := errors.Join(errs...); err != nil {
		b.Fatal(err)
	}
	throughputProgress("%s: done in %s", ns, took.Round(time.Second))
	return took, cpu
}

// machineCPU is the CPU time every process of the machine has used since
// it started (/proc/stat: user, nice, system, irq, softirq, steal).
func machineCPU(b *testing.B) time.Duration {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		b.Fatal(err)
	}
	line, _, _ := strings.Cut(string(data), "\n")
	fields := strings.Fields(line)
	var ticks int64
	for _, i := range []int{1, 2, 3, 6, 7, 8} {
		if i < len(fields) {
			v, _ := strconv.ParseInt(fields[i], 10, 64)
			ticks += v
		}
	}
	return time.Duration(ticks) * time.Second / clockTicks
}

// processCPU is the CPU time (user and system) process pid has used.
func processCPU(b *testing.B, pid int) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	// The fields after the command, whose name is in parentheses.
	_, rest, _ := strings.Cut(string(data), ") ")
	fields := strings.Fields(rest)
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	return time.Duration(utime+stime) * time.Second / clockTicks
}

// components are the processes besides the runs and the CAPTF manager
// that a part keeps busy.
var components = []string{"kube-apiserver", "etcd", "kube-controller-manager", "capi-manager"}

// componentsCPU is the CPU time each of the components has used, by
// command name.
func componentsCPU(b *testing.B) map[string]time.Duration {
	out := map[string]time.Duration{}
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		b.Fatal(err)
	}
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
		if err != nil {
			continue
		}
		// comm is cut at 15 characters.
		for _, name := range components {
			if c := strings.TrimSpace(string(comm)); strings.HasPrefix(name, c) && len(c) >= min(len(name), 15) {
				out[name] += processCPU(b, pid)
			}
		}
	}
	return out
}

func (s scaled) componentsLine() string {
	var out []string
	for _, name := range components {
		out = append(out, fmt.Sprintf("%s %.0f s", name, s.components[name].Seconds()))
	}
	return strings.Join(out, ", ")
}

// clockTicks is Linux's USER_HZ, the unit of /proc's CPU times.
const clockTicks = 100

// directApply lays out one run as the node does (the module copied, the
// inputs written) and calls the runner's apply.
func (t *throughput) directApply(ns, module string, i int, in appliedInputs) error {
	name := fmt.Sprintf("direct-%03d", i)
	d := filepath.Join(t.dir, "direct", ns, strconv.Itoa(i))
	config, work := filepath.Join(d, "config"), filepath.Join(d, "work")
	for _, p := range []string{config, work} {
		if err := os.MkdirAll(p, 0o700); err != nil {
			return err
		}
	}
	if out, err := exec.Command("cp", "-r", module, filepath.Join(d, "module")).CombinedOutput(); err != nil {
		return fmt.Errorf("copying the module: %w: %s", err, out)
	}
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	for file, data := range map[string][]byte{filepath.Join(config, records.MainFile): in.main, filepath.Join(config, records.TfvarsFile): in.tfvars, filepath.Join(d, "plan-key"): key} {
		if err := os.WriteFile(file, data, 0o600); err != nil {
			return err
		}
	}
	suffix, err := state.Suffix(ns, state.KindMachine, name)
	if err != nil {
		return err
	}
	o := runner.Options{
		Op: runner.OpApply, Bin: []string{filepath.Join(t.tools, "bin", "tofu")}, Config: config, Module: filepath.Join(d, "module"),
		Providers: filepath.Join(t.tools, "providers"), Workdir: work, Image: devenv.ExampleImage("noop-machine", "tofu"), Result: filepath.Join(d, "result.json"),
		BackendConfig: []string{"secret_suffix=" + suffix, "namespace=" + ns, "config_path=" + t.env.Kubeconfig,
			"labels=" + state.HCLMap(state.OwnerLabels(state.KindMachine, name, "quickstart"))},
		LockTimeout: 20 * time.Second, StopTimeout: time.Minute, PlanKeyFile: filepath.Join(d, "plan-key"), Credentials: filepath.Join(d, "credentials"),
	}
	var logs runnerLog
	res, code := runner.Run(o, runner.Env{Environ: os.Environ(), Stdout: &logs, Stderr: &logs, Stop: make(chan struct{})})
	if code != runner.ExitOK {
		return fmt.Errorf("the direct apply %d failed (%d, %+v):\n%s", i, code, res.Error, logs.tail())
	}
	return os.RemoveAll(d)
}

// runnerLog keeps the end of a run's output, for its failure.
type runnerLog struct {
	mu  sync.Mutex
	buf []byte
}

func (l *runnerLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	if len(l.buf) > 64<<10 {
		l.buf = l.buf[len(l.buf)-32<<10:]
	}
	return len(p), nil
}

func (l *runnerLog) tail() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return string(l.buf)
}
