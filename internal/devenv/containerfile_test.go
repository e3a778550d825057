package devenv_test

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"captf.io/captf/internal/devenv"
	"captf.io/captf/internal/imagebuild"
	"captf.io/captf/internal/jobs"
	"captf.io/captf/internal/localnode"
	"captf.io/captf/internal/test/envtest"
	"captf.io/captf/pkg/contract"
)

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := envtest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// pinnedVersions are the assignments of hack/tools/versions.env.
func pinnedVersions(t *testing.T, root string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "hack", "tools", "versions.env"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(line, "#") {
			out[k] = v
		}
	}
	return out
}

// The module image's Containerfile lays the module and its provider
// mirror over the module base image of its runtime, at the version
// hack/tools pins, as imagebuild.BuildModule does: together with the base
// (images/base/Containerfile) it populates the image contract's paths the
// Job builder uses and none a Job mounts, as user 65532, with the
// contract's labels and the module's role and capacity.
func TestModuleContainerfileFollowsTheImageContract(t *testing.T) {
	root := repoRoot(t)
	cf := parseContainerfile(t, filepath.Join(root, "images", "module", "Containerfile"))
	baseCF := parseContainerfile(t, filepath.Join(root, "images", "base", "Containerfile"))
	checkArgScopes(t, cf)
	pins := pinnedVersions(t, root)
	for name, rt := range imagebuild.BaseRuntimes {
		t.Run(rt, func(t *testing.T) {
			capacity, nodeInfo := `{"cpu":"2"}`, `{"architecture":"arm64"}`
			args := map[string]string{"RUNTIME": rt, "MODULE": "noop-machine", "ROLE": "machine", "CAPACITY": capacity, "NODE_INFO": nodeInfo}
			img := cf.build(t, args)
			pinned := strings.TrimPrefix(pins[strings.ToUpper(rt)+"_VERSION"], "v")
			if pinned == "" {
				t.Fatalf("hack/tools/versions.env pins no %s_VERSION", strings.ToUpper(rt))
			}
			if from, want := cf.expandGlobal(img.stages[0].from, args), cf.args["BASE_REGISTRY"]+"/"+name+":"+pinned; from != want {
				t.Errorf("the image is built FROM %q, want the %s base image %s", from, rt, want)
			}
			base := baseCF.build(t, map[string]string{"RUNTIME": rt})
			got := map[string]instr{}
			for _, c := range img.copies {
				got[dest(c)] = c
			}
			want := []string{jobs.ModuleDir, jobs.ProvidersDir}
			if len(got) != len(want) {
				t.Errorf("the module's stage populates %v, want exactly %v (the base holds the rest)", keys(got), want)
			}
			for _, p := range want {
				if c, ok := got[p]; !ok || c.flags["chown"] != "65532:65532" {
					t.Errorf("nothing is copied to %s owned by 65532 (%v)", p, c.flags)
				}
			}
			if src := got[jobs.ModuleDir].words[0]; filepath.Clean(src) != "examples/modules/noop-machine" {
				t.Errorf("%s comes from %q, want the module directory examples/modules/noop-machine", jobs.ModuleDir, src)
			}
			for _, c := range append(img.copies, base.copies...) {
				for _, reserved := range []string{jobs.RunnerDir, jobs.WorkDir, jobs.ConfigDir, jobs.PlanKeyDir, jobs.TmpDir, jobs.CredentialsMountPath} {
					if d := dest(c); d == reserved || strings.HasPrefix(d, reserved+"/") {
						t.Errorf("the image writes %s, a path a Job mounts", d)
					}
				}
			}
			user, entrypoint := base.user, base.entrypoint
			if img.user != "" {
				user = img.user
			}
			if img.entrypoint != nil {
				entrypoint = img.entrypoint
			}
			if user != "65532:65532" {
				t.Errorf("USER is %q, want 65532:65532", user)
			}
			if len(entrypoint) != 1 || entrypoint[0] != jobs.RuntimePath {
				t.Errorf("ENTRYPOINT is %q, want [%s]", entrypoint, jobs.RuntimePath)
			}
			labels := maps.Clone(base.labels)
			maps.Copy(labels, img.labels)
			wantLabels := map[string]string{
				"io.captf.contract": contract.Version, "io.captf.role": "machine",
				"io.captf.runtime": rt, "io.captf.runtime.version": pinned,
				"io.captf.capacity": capacity, "io.captf.node-info": nodeInfo,
			}
			for k, v := range wantLabels {
				if labels[k] != v {
					t.Errorf("label %s is %q, want %q", k, labels[k], v)
				}
			}
		})
	}
}

// The manager image's Containerfile builds the manager and the runner
// statically, puts the runner where the Job's init container copies it
// from, and enters the manager as config/manager runs it, as user 65532.
func TestManagerContainerfile(t *testing.T) {
	root := repoRoot(t)
	cf := parseContainerfile(t, filepath.Join(root, "images", "manager", "Containerfile"))
	checkArgScopes(t, cf)
	img := cf.build(t, nil)
	objs, err := devenv.ReadManifests(filepath.Join(root, "config", "manager", "manager.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var command []string
	for _, o := range objs {
		if o.GetKind() != "Deployment" {
			continue
		}
		containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
		if len(containers) > 0 {
			command, _, _ = unstructured.NestedStringSlice(containers[0].(map[string]any), "command")
		}
	}
	if len(command) == 0 {
		t.Fatal("config/manager/manager.yaml has no Deployment whose container has a command")
	}
	got := map[string]string{}
	for _, c := range img.copies {
		got[dest(c)] = c.flags["from"]
	}
	for _, p := range []string{localnode.RunnerPathInImage, command[0]} {
		if got[p] != "build" {
			t.Errorf("%s is not copied from the build stage (copies: %v)", p, got)
		}
	}
	if len(img.entrypoint) != 1 || img.entrypoint[0] != command[0] {
		t.Errorf("ENTRYPOINT is %q, want [%s] as config/manager runs it", img.entrypoint, command[0])
	}
	if img.user != "65532:65532" {
		t.Errorf("USER is %q, want 65532:65532", img.user)
	}
	sameAsImagebuild(t, cf, img)

	build := cf.stages[0]
	var script string
	sources := map[string]bool{}
	for _, in := range build.instrs {
		switch in.cmd {
		case "RUN":
			script += in.words[0] + "\n"
		case "COPY":
			for _, w := range in.words[:len(in.words)-1] {
				sources[strings.TrimSuffix(w, "/")] = true
			}
		}
	}
	for _, want := range []string{"CGO_ENABLED=0", "-o /out/manager ./cmd/manager", "-o /out/runner ./cmd/runner"} {
		if !strings.Contains(script, want) {
			t.Errorf("the build stage does not run %q", want)
		}
	}
	// Every directory of this module the two binaries import is in the
	// build context the stage copies.
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", "captf.io/captf/cmd/manager", "captf.io/captf/cmd/runner").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		rel, ok := strings.CutPrefix(pkg, "captf.io/captf/")
		if top, _, _ := strings.Cut(rel, "/"); ok && !sources[top] {
			t.Errorf("the build stage does not copy %s/, which %s is in", top, pkg)
		}
	}
	// The -X stamps name variables that exist.
	for _, m := range regexp.MustCompile(`-X captf\.io/captf/(\S+)\.(\w+)=`).FindAllStringSubmatch(script, -1) {
		pkgDir, name := filepath.Join(root, filepath.FromSlash(m[1])), m[2]
		files, _ := filepath.Glob(filepath.Join(pkgDir, "*.go"))
		found := false
		for _, f := range files {
			data, _ := os.ReadFile(f)
			found = found || regexp.MustCompile(`(?m)^\s+`+name+`\s+string\b|var `+name+`\s+string\b`).Match(data)
		}
		if !found {
			t.Errorf("the build stamps %s.%s, which is no string variable", m[1], name)
		}
	}
}

func keys(m map[string]instr) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// sameAsImagebuild checks that `make images` (internal/imagebuild) builds
// what the manager's Containerfile builds: the files the build stage
// makes at the same paths and modes, the same user, entrypoint and label
// keys, on a base holding what the distroless static nonroot base holds
// (a passwd entry for 65532, its home, a sticky /tmp, the CA bundle).
func sameAsImagebuild(t *testing.T, cf *containerfile, img image) {
	t.Helper()
	spec := imagebuild.ManagerSpec("manager", "runner", imagebuild.CABundlePath, "amd64", imagebuild.Meta{})
	byPath := map[string]imagebuild.File{}
	for _, f := range spec.Files {
		byPath[f.Path] = f
	}
	var built []string
	for _, c := range img.copies {
		if c.flags["from"] != "build" {
			continue
		}
		built = append(built, dest(c))
		if f, ok := byPath[dest(c)]; !ok || fmt.Sprintf("%04o", f.Mode.Perm()) != c.flags["chmod"] {
			t.Errorf("the Containerfile copies %s with mode %s; imagebuild has %+v", dest(c), c.flags["chmod"], f)
		}
	}
	slices.Sort(built)
	if want := []string{imagebuild.ManagerPath, imagebuild.RunnerPath}; !slices.Equal(built, want) {
		t.Errorf("the Containerfile copies %v from its build stage; imagebuild builds %v", built, want)
	}
	if img.user != spec.User || !slices.Equal(img.entrypoint, spec.Entrypoint) {
		t.Errorf("the Containerfile runs %q as %s; imagebuild %q as %s", img.entrypoint, img.user, spec.Entrypoint, spec.User)
	}
	if got, want := slices.Sorted(maps.Keys(img.labels)), slices.Sorted(maps.Keys(spec.Labels)); !slices.Equal(got, want) {
		t.Errorf("the Containerfile labels %v; imagebuild %v", got, want)
	}
	if base := cf.args["BASE_IMAGE"]; !strings.Contains(base, "distroless/static") || !strings.HasSuffix(base, ":nonroot") {
		t.Errorf("the Containerfile's base is %s: imagebuild lays out what distroless static nonroot holds", base)
	}
	for _, p := range []string{"/etc/passwd", "/etc/group", "/home/nonroot", "/tmp", imagebuild.CABundlePath} {
		if _, ok := byPath[p]; !ok {
			t.Errorf("imagebuild's manager image lacks %s, which its Containerfile's base holds", p)
		}
	}
}
