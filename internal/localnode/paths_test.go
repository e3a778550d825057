package localnode

import (
	"io"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/jobs"
	"captf.io/captf/internal/runner"
)

func TestExpand(t *testing.T) {
	vars := map[string]string{"A": "1", "HOME": "/captf/work"}
	testCases := []struct{ in, want string }{
		{"$(A)/x", "1/x"},
		{"$(HOME)/.cache", "/captf/work/.cache"},
		{"$$(A)", "$(A)"},
		{"$(B)", "$(B)"},
		{"$(A", "$(A"},
		{"a$", "a$"},
		{"$x", "$x"},
		{"", ""},
	}
	for _, tc := range testCases {
		if got := expand(tc.in, vars); got != tc.want {
			t.Errorf("expand(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestRepository(t *testing.T) {
	testCases := []struct{ ref, want string }{
		{"local/noop-cluster:tofu", "local/noop-cluster"},
		{"registry:5000/modules/noop:v1", "registry:5000/modules/noop"},
		{"ghcr.io/m/noop@sha256:ab12", "ghcr.io/m/noop"},
		{"ghcr.io/m/noop:v1@sha256:ab12", "ghcr.io/m/noop"},
		{"registry:5000/noop", "registry:5000/noop"},
		{"noop", "noop"},
	}
	for _, tc := range testCases {
		if got := repository(tc.ref); got != tc.want {
			t.Errorf("repository(%q) = %q, want %q", tc.ref, got, tc.want)
		}
	}
}

// A digest reference, as a manager pins it from a container status,
// finds the image the tag found.
func TestLookupByDigest(t *testing.T) {
	img := image{ref: "local/noop:tofu", id: "local/noop@sha256:" + strings.Repeat("a", 64)}
	images := map[string]image{img.ref: img}
	for _, ref := range []string{img.ref, img.id} {
		if got, ok := lookup(images, ref); !ok || got.ref != img.ref {
			t.Errorf("lookup(%q) = %v, %v; want the image", ref, got.ref, ok)
		}
	}
	for _, ref := range []string{"local/noop:terraform", "local/noop@sha256:" + strings.Repeat("b", 64), "other/noop@sha256:" + strings.Repeat("a", 64)} {
		if _, ok := lookup(images, ref); ok {
			t.Errorf("lookup(%q) found an image", ref)
		}
	}
}

// Every path of a built Job's runner arguments moves into the container's
// filesystem, the backend leaves in_cluster_config for the kubeconfig, and
// every other flag stays as the pod says.
func TestHostOptions(t *testing.T) {
	spec := jobs.Spec{
		Kind: "TerraformCluster", ObjectName: "demo", Namespace: "team-a", UID: "uid-1", ClusterName: "demo",
		Op: infrav1.OperationApply, Attempt: 2, Name: "captf-c-demo-apply-a2-abcdef",
		Image: "local/noop-cluster:tofu", RunnerImage: "local/runner:test", Policy: jobs.MergePolicy(nil, nil, nil),
		PlanKeySecret: "captf-plankey-c-demo", ForceUnlock: "lock-1", InputsHash: "h2:x",
		Guard:        jobs.Guard{Deletes: true, InputsHash: "h2:x"},
		RunnerEvents: true,
	}
	job, _, err := jobs.Build(spec)
	if err != nil {
		t.Fatal(err)
	}
	var c *corev1.Container
	for i := range job.Spec.Template.Spec.Containers {
		c = &job.Spec.Template.Spec.Containers[i]
	}
	if c == nil || c.Name != jobs.SourceContainer || runnerOp(commandLine(c, nil)) != "apply" {
		t.Fatalf("the Job's module container is %+v", c)
	}
	if standIn, err := (&inProcess{}).admit(nil, c, false); standIn || err != nil {
		t.Fatalf("the in-process runtime does not run the module container: %v, %v", standIn, err)
	}
	pod, err := runner.ParseRunFlags(commandLine(c, nil)[2:], io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	got := hostOptions(pod, rootfs("/r"), "/k/kubeconfig")

	want := pod
	want.Bin = []string{"/r/captf/runtime"}
	want.Config, want.Module, want.Providers, want.Workdir = "/r/captf/config", "/r/captf/module", "/r/captf/providers", "/r/captf/work"
	want.Result, want.PlanKeyFile, want.Credentials = "/r/dev/termination-log", "/r/captf/plan-key/key", "/r/var/run/captf/credentials"
	want.BackendConfig = append([]string(nil), pod.BackendConfig...)
	for i, v := range want.BackendConfig {
		if v == "in_cluster_config=true" {
			want.BackendConfig[i] = "config_path=/k/kubeconfig"
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("hostOptions:\n got %+v\nwant %+v", got, want)
	}
	if want.Op != "apply" || !want.GuardDeletes || want.ForceUnlock != "lock-1" || want.EventObject == "" || want.JobName != spec.Name {
		t.Errorf("the parsed flags lost something: %+v", want)
	}
}

func TestMountedPath(t *testing.T) {
	c := &corev1.Container{VolumeMounts: []corev1.VolumeMount{{Name: "work", MountPath: "/captf/work"}, {Name: "tmp", MountPath: "/tmp"}}}
	testCases := []struct{ in, want string }{
		{"/captf/work", "/r/captf/work"},
		{"/tmp", "/r/tmp"},
		{"/tmp/x/../y", "/r/tmp/y"},
		{"/captf/workshop", "/captf/workshop"},
		{"/usr/bin", "/usr/bin"},
		{"relative/tmp", "relative/tmp"},
		{"1", "1"},
	}
	for _, tc := range testCases {
		if got := mountedPath(rootfs("/r"), c, tc.in); got != tc.want {
			t.Errorf("mountedPath(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestMessage(t *testing.T) {
	readFile := &corev1.Container{TerminationMessagePolicy: corev1.TerminationMessageReadFile}
	fallback := &corev1.Container{TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError}
	long := strings.Repeat("x", 5000)
	testCases := []struct {
		name    string
		c       *corev1.Container
		written string
		code    int
		log     string
		want    string
	}{
		{"file", readFile, `{"version":1}`, 0, "log", `{"version":1}`},
		{"cut to 4096 bytes", readFile, long, 0, "", long[:4096]},
		{"no file, ReadFile", readFile, "", 1, "log", ""},
		{"no file, fallback, failed", fallback, "", 1, "the log", "the log"},
		{"no file, fallback, succeeded", fallback, "", 0, "the log", ""},
		{"fallback keeps the log's tail", fallback, "", 1, long + "end", (long + "end")[5003-2048:]},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			if got := message(tc.c, []byte(tc.written), tc.code, tc.log); got != tc.want {
				t.Errorf("message = %d bytes %.40q, want %d bytes %.40q", len(got), got, len(tc.want), tc.want)
			}
		})
	}
}

func TestRunnerOp(t *testing.T) {
	testCases := []struct {
		argv []string
		want string
	}{
		{[]string{"/captf/bin/runner", "run", "--op=destroy", "--bin=/captf/runtime"}, "destroy"},
		{[]string{"/captf/bin/runner", "run", "-op=plan"}, "plan"},
		{[]string{"/runner", "copy", "/captf/bin/runner"}, ""},
		{[]string{"sh", "-c", "--op=apply"}, ""},
		{nil, ""},
	}
	for _, tc := range testCases {
		if got := runnerOp(tc.argv); got != tc.want {
			t.Errorf("runnerOp(%q) = %q, want %q", tc.argv, got, tc.want)
		}
	}
}
