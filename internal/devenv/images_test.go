package devenv_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"captf.io/captf/internal/devenv"
	"captf.io/captf/internal/jobs"
	"captf.io/captf/internal/localnode"
	"captf.io/captf/internal/test/envtest"
)

// fakeCheckout is a checkout with two example modules (alpha-machine
// requires the null provider, beta-cluster none) and a tool cache with both runtimes (a
// script that says its version), a shell and a provider mirror, all
// small.
func fakeCheckout(t *testing.T) (repo, tools string) {
	t.Helper()
	repo, tools = t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(repo, "examples", "modules", "alpha-machine", "main.tf"), alphaModule("# alpha"), 0o644)
	writeFile(t, filepath.Join(repo, "examples", "modules", "beta-cluster", "main.tf"), "# beta\n", 0o644)
	writeFile(t, filepath.Join(repo, "examples", "modules", "contract_test.go"), "package modules\n", 0o644)
	for _, rt := range devenv.RuntimeNames {
		writeFile(t, filepath.Join(tools, "bin", rt), fakeRuntime(rt, "1.0.0"), 0o755)
	}
	writeFile(t, filepath.Join(tools, "bin", "sh"), "shell", 0o755)
	for _, host := range []string{"registry.opentofu.org", "registry.terraform.io"} {
		writeFile(t, filepath.Join(tools, "providers", host, "hashicorp", "null", "1.0.0", "linux_amd64", "terraform-provider-null_v1.0.0"), "provider", 0o755)
	}
	return repo, tools
}

// alphaModule is the alpha module's main.tf, first line first.
func alphaModule(first string) string {
	return first + "\nterraform {\n  required_providers {\n    null = { source = \"hashicorp/null\" }\n  }\n}\n"
}

// fakeRuntime is a runtime that says its version, as `version -json` does,
// and counts its calls in <itself>.calls (outside the image).
func fakeRuntime(rt, version string) string {
	return "#!/bin/sh\n# " + rt + "\necho >>\"$0.calls\"\necho '{\"terraform_version\":\"" + version + "\"}'\n"
}

// runtimeCalls is how often the fake runtimes of tools were run.
func runtimeCalls(t *testing.T, tools string) int {
	t.Helper()
	n := 0
	for _, rt := range devenv.RuntimeNames {
		data, err := os.ReadFile(filepath.Join(tools, "bin", rt+".calls"))
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		n += strings.Count(string(data), "\n")
	}
	return n
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

// BuildImages builds one image per example module and runtime over its
// runtime's base image, stores it under <store>/local/<module>/<runtime>,
// reports each in reference order, and rebuilds only the images whose
// module or runtime changed.
func TestBuildImages(t *testing.T) {
	repo, tools := fakeCheckout(t)
	store := filepath.Join(t.TempDir(), "images")
	var reported []string
	built, err := devenv.BuildImages(t.Context(), store, repo, tools, func(b devenv.BuiltImage) { reported = append(reported, b.Ref) })
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"local/alpha-machine:terraform", "local/alpha-machine:tofu", "local/beta-cluster:terraform", "local/beta-cluster:tofu"}
	if !reflect.DeepEqual(reported, want) || !reflect.DeepEqual(changedRefs(built), want) {
		t.Fatalf("BuildImages reported %v and built %v, want %v", reported, changedRefs(built), want)
	}
	for _, b := range built {
		module, runtime, _ := strings.Cut(strings.TrimPrefix(b.Ref, "local/"), ":")
		if b.Dir != filepath.Join(store, "local", module, runtime) {
			t.Errorf("%s is in %s", b.Ref, b.Dir)
		}
		main := "# beta\n"
		if module == "alpha-machine" {
			main = alphaModule("# alpha")
		}
		// The base image's layout: the runtime at /usr/local/bin, linked
		// from /captf/runtime, and the shell.
		checks := map[string]string{jobs.ModuleDir + "/main.tf": main, jobs.RuntimePath: fakeRuntime(runtime, "1.0.0"),
			"/usr/local/bin/" + runtime: fakeRuntime(runtime, "1.0.0"), "/bin/sh": "shell"}
		for p, content := range checks {
			if data, err := os.ReadFile(filepath.Join(b.Dir, p)); err != nil || string(data) != content {
				t.Errorf("%s holds %q at %s (%v), want %q", b.Ref, data, p, err, content)
			}
		}
		host := map[string]string{"tofu": "registry.opentofu.org", "terraform": "registry.terraform.io"}[runtime]
		_, err := os.Stat(filepath.Join(b.Dir, jobs.ProvidersDir, host, "hashicorp", "null"))
		if module == "alpha-machine" && err != nil {
			t.Errorf("%s has no mirror of the provider its module requires: %v", b.Ref, err)
		}
		if module == "beta-cluster" && err == nil {
			t.Errorf("%s mirrors a provider its module does not require", b.Ref)
		}
		// A module that requires no provider has an empty mirror: init
		// reaches no registry.
		if st, err := os.Stat(filepath.Join(b.Dir, jobs.ProvidersDir)); module == "beta-cluster" && (err != nil || !st.IsDir()) {
			t.Errorf("%s has no empty provider mirror at %s: %v", b.Ref, jobs.ProvidersDir, err)
		}
		labels, err := localnode.ImageLabels(store, b.Ref)
		if err != nil || labels["io.captf.runtime"] != runtime || labels["io.captf.runtime.version"] != "1.0.0" || labels["io.captf.contract"] != "v1alpha1" ||
			labels["io.captf.role"] != module[strings.LastIndex(module, "-")+1:] {
			t.Errorf("%s is labelled %v (%v), want its runtime, version, contract and role", b.Ref, labels, err)
		}
		digest, err := localnode.ImageDigest(store, b.Ref)
		if err != nil || digest == "" || b.ID != "local/"+module+"@"+digest {
			t.Errorf("%s has the ID %s and the stored digest %q (%v)", b.Ref, b.ID, digest, err)
		}
	}

	calls := runtimeCalls(t, tools)
	// Files the image leaves out change nothing.
	writeFile(t, filepath.Join(repo, "examples", "modules", "beta-cluster", ".terraform", "x"), "cache", 0o644)
	writeFile(t, filepath.Join(repo, "examples", "modules", "beta-cluster", "terraform.tfstate"), "{}", 0o644)
	again, err := devenv.BuildImages(t.Context(), store, repo, tools, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := changedRefs(again); len(got) != 0 {
		t.Errorf("a second run rebuilt %v, want nothing", got)
	}
	if n := runtimeCalls(t, tools); n != calls {
		t.Errorf("a second run ran the runtimes %d times to build again, want none (the recipe is unchanged)", n-calls)
	}
	for i := range built {
		if again[i].ID != built[i].ID {
			t.Errorf("%s changed its ID from %s to %s with nothing changed", built[i].Ref, built[i].ID, again[i].ID)
		}
	}

	writeFile(t, filepath.Join(repo, "examples", "modules", "alpha-machine", "main.tf"), alphaModule("# alpha, edited"), 0o644)
	writeFile(t, filepath.Join(tools, "bin", "terraform.new"), fakeRuntime("terraform", "1.0.1"), 0o755)
	if err := os.Rename(filepath.Join(tools, "bin", "terraform.new"), filepath.Join(tools, "bin", "terraform")); err != nil {
		t.Fatal(err)
	}
	edited, err := devenv.BuildImages(t.Context(), store, repo, tools, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := changedRefs(edited), []string{"local/alpha-machine:terraform", "local/alpha-machine:tofu", "local/beta-cluster:terraform"}; !reflect.DeepEqual(got, want) {
		t.Errorf("after editing alpha and rebuilding terraform, BuildImages rebuilt %v, want %v", got, want)
	}
}

// A tool cache without a runtime or a provider mirror is an error that
// says how to build it.
func TestBuildImagesNeedsTheTools(t *testing.T) {
	for _, missing := range []string{filepath.Join("bin", "terraform"), filepath.Join("bin", "sh"), "providers"} {
		t.Run(missing, func(t *testing.T) {
			repo, tools := fakeCheckout(t)
			if err := os.RemoveAll(filepath.Join(tools, missing)); err != nil {
				t.Fatal(err)
			}
			_, err := devenv.BuildImages(t.Context(), t.TempDir(), repo, tools, nil)
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
	if got, err := devenv.ManagerBinaries(); err != nil || got != "/home/me/.cache/captf/bin/linux-"+runtime.GOARCH {
		t.Errorf("ManagerBinaries() = %q, %v", got, err)
	}
}

// The images of the real example modules, built from the tool cache, run
// the pinned runtimes from /captf/runtime, and a machine's says its
// capacity.
func TestExampleImagesFromTheToolCache(t *testing.T) {
	tools := envtest.RequireTools(t, "tofu", "terraform")
	root := repoRoot(t)
	store := t.TempDir()
	built, err := devenv.BuildImages(t.Context(), store, root, tools, nil)
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
	if labels, err := localnode.ImageLabels(store, devenv.ExampleImage("noop-machine", "tofu")); err != nil || labels["io.captf.capacity"] != `{"cpu":"2","memory":"4Gi"}` {
		t.Errorf("noop-machine is labelled %v (%v), want the capacity its recipe declares", labels, err)
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
