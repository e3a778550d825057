package devenv_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"captf.io/captf/internal/devenv"
	"captf.io/captf/internal/jobs"
	"captf.io/captf/internal/test/envtest"
)

// fakeCheckout is a checkout with two example modules and a tool cache
// with both runtimes and a provider mirror, all small.
func fakeCheckout(t *testing.T) (repo, tools string) {
	t.Helper()
	repo, tools = t.TempDir(), t.TempDir()
	for _, m := range []string{"alpha", "beta"} {
		writeFile(t, filepath.Join(repo, "examples", "modules", m, "main.tf"), "# "+m+"\n", 0o644)
	}
	writeFile(t, filepath.Join(repo, "examples", "modules", "contract_test.go"), "package modules\n", 0o644)
	for _, rt := range devenv.RuntimeNames {
		writeFile(t, filepath.Join(tools, "bin", rt), "#!/bin/sh\necho "+rt+"\n", 0o755)
	}
	writeFile(t, filepath.Join(tools, "providers", "registry.opentofu.org", "hashicorp", "null", "1.0.0", "linux_amd64", "terraform-provider-null_v1.0.0"), "provider", 0o755)
	return repo, tools
}

func writeFile(t *testing.T, p, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

// changedRefs are the references BuildImages rebuilt.
func changedRefs(built []devenv.BuiltImage) []string {
	var out []string
	for _, b := range built {
		if b.Changed {
			out = append(out, b.Ref)
		}
	}
	return out
}

// BuildImages lays out one image per example module and runtime under
// <store>/local/<module>/<runtime>, reports each in reference order, and
// rebuilds only the images whose module or runtime changed.
func TestBuildImages(t *testing.T) {
	repo, tools := fakeCheckout(t)
	store := filepath.Join(t.TempDir(), "images")
	var reported []string
	built, err := devenv.BuildImages(store, repo, tools, func(b devenv.BuiltImage) { reported = append(reported, b.Ref) })
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"local/alpha:terraform", "local/alpha:tofu", "local/beta:terraform", "local/beta:tofu"}
	if !reflect.DeepEqual(reported, want) || !reflect.DeepEqual(changedRefs(built), want) {
		t.Fatalf("BuildImages reported %v and built %v, want %v", reported, changedRefs(built), want)
	}
	for _, b := range built {
		module, runtime, _ := strings.Cut(strings.TrimPrefix(b.Ref, "local/"), ":")
		if b.Dir != filepath.Join(store, "local", module, runtime) {
			t.Errorf("%s is in %s", b.Ref, b.Dir)
		}
		checks := map[string]string{jobs.ModuleDir + "/main.tf": "# " + module + "\n", jobs.RuntimePath: "#!/bin/sh\necho " + runtime + "\n"}
		for p, content := range checks {
			if data, err := os.ReadFile(filepath.Join(b.Dir, p)); err != nil || string(data) != content {
				t.Errorf("%s holds %q at %s (%v), want %q", b.Ref, data, p, err, content)
			}
		}
		if _, err := os.Stat(filepath.Join(b.Dir, jobs.ProvidersDir, "registry.opentofu.org")); err != nil {
			t.Errorf("%s has no provider mirror: %v", b.Ref, err)
		}
	}

	again, err := devenv.BuildImages(store, repo, tools, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := changedRefs(again); len(got) != 0 {
		t.Errorf("a second run rebuilt %v, want nothing", got)
	}
	for i := range built {
		if again[i].ID != built[i].ID {
			t.Errorf("%s changed its ID from %s to %s with nothing changed", built[i].Ref, built[i].ID, again[i].ID)
		}
	}

	writeFile(t, filepath.Join(repo, "examples", "modules", "alpha", "main.tf"), "# alpha, edited\n", 0o644)
	writeFile(t, filepath.Join(tools, "bin", "terraform.new"), "#!/bin/sh\necho terraform 2\n", 0o755)
	if err := os.Rename(filepath.Join(tools, "bin", "terraform.new"), filepath.Join(tools, "bin", "terraform")); err != nil {
		t.Fatal(err)
	}
	edited, err := devenv.BuildImages(store, repo, tools, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := changedRefs(edited), []string{"local/alpha:terraform", "local/alpha:tofu", "local/beta:terraform"}; !reflect.DeepEqual(got, want) {
		t.Errorf("after editing alpha and rebuilding terraform, BuildImages rebuilt %v, want %v", got, want)
	}
}

// A tool cache without a runtime or a provider mirror is an error that
// says how to build it.
func TestBuildImagesNeedsTheTools(t *testing.T) {
	for _, missing := range []string{filepath.Join("bin", "terraform"), "providers"} {
		t.Run(missing, func(t *testing.T) {
			repo, tools := fakeCheckout(t)
			if err := os.RemoveAll(filepath.Join(tools, missing)); err != nil {
				t.Fatal(err)
			}
			_, err := devenv.BuildImages(t.TempDir(), repo, tools, nil)
			if err == nil || !strings.Contains(err.Error(), filepath.Join(tools, missing)) || !strings.Contains(err.Error(), "make tools") {
				t.Errorf("BuildImages without %s: %v; want an error naming it and `make tools`", missing, err)
			}
		})
	}
}

func TestDefaultImageStore(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", "/var/cache/me")
	if got, err := devenv.DefaultImageStore(); err != nil || got != "/var/cache/me/captf/images" {
		t.Errorf("DefaultImageStore() = %q, %v", got, err)
	}
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("HOME", "/home/me")
	if got, err := devenv.DefaultImageStore(); err != nil || got != "/home/me/.cache/captf/images" {
		t.Errorf("DefaultImageStore() = %q, %v", got, err)
	}
}

// The images of the real example modules, built from the tool cache, run
// the pinned runtimes from /captf/runtime.
func TestExampleImagesFromTheToolCache(t *testing.T) {
	tools := envtest.RequireTools(t, "tofu", "terraform")
	root := repoRoot(t)
	built, err := devenv.BuildImages(t.TempDir(), root, tools, nil)
	if err != nil {
		t.Fatal(err)
	}
	modules, err := os.ReadDir(filepath.Join(root, "examples", "modules"))
	if err != nil {
		t.Fatal(err)
	}
	refs := map[string]string{}
	for _, b := range built {
		refs[b.Ref] = b.Dir
	}
	for _, m := range modules {
		for _, rt := range devenv.RuntimeNames {
			if _, ok := refs[devenv.ExampleImage(m.Name(), rt)]; m.IsDir() && !ok {
				t.Errorf("no image %s", devenv.ExampleImage(m.Name(), rt))
			}
		}
	}
	pins := pinnedVersions(t, root)
	for _, rt := range devenv.RuntimeNames {
		dir := refs[devenv.ExampleImage("noop-machine", rt)]
		out, err := exec.Command(filepath.Join(dir, filepath.FromSlash(jobs.RuntimePath)), "version").CombinedOutput()
		if want := " " + pins[strings.ToUpper(rt)+"_VERSION"]; err != nil || !strings.Contains(string(out), want) {
			t.Errorf("%s/captf/runtime version: %v\n%s\nwant %q", dir, err, out, want)
		}
	}
}
