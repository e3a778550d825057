package localnode

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"captf.io/captf/internal/jobs"
)

func TestParseStoreRef(t *testing.T) {
	digest := "sha256:" + strings.Repeat("ab", 32)
	testCases := []struct {
		ref  string
		want storeRef
		err  bool
	}{
		{ref: "local/noop-machine:tofu", want: storeRef{repo: "local/noop-machine", tag: "tofu"}},
		{ref: "noop", want: storeRef{repo: "noop", tag: "latest"}},
		{ref: "registry:5000/modules/noop", want: storeRef{repo: "registry:5000/modules/noop", tag: "latest"}},
		{ref: "registry:5000/noop:v1.2", want: storeRef{repo: "registry:5000/noop", tag: "v1.2"}},
		{ref: "local/noop@" + digest, want: storeRef{repo: "local/noop", digest: digest}},
		{ref: "local/noop:tofu@" + digest, want: storeRef{repo: "local/noop", tag: "tofu", digest: digest}},
		{ref: "local/../etc:tofu", err: true},
		{ref: "../noop:tofu", err: true},
		{ref: "/noop:tofu", err: true},
		{ref: "local//noop:tofu", err: true},
		{ref: "local/./noop:tofu", err: true},
		{ref: "local/noop:", err: true},
		{ref: "local/noop:.tofu@x", err: true},
		{ref: "local/noop:..", err: true},
		{ref: "local/noop@sha256:abc", err: true},
		{ref: "local/noop@md5:" + strings.Repeat("a", 64), err: true},
		{ref: "", err: true},
	}
	for _, tc := range testCases {
		t.Run(tc.ref, func(t *testing.T) {
			got, err := parseStoreRef(tc.ref)
			if tc.err {
				if err == nil {
					t.Fatalf("parseStoreRef(%q) = %+v, want an error", tc.ref, got)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("parseStoreRef(%q) = %+v, %v; want %+v", tc.ref, got, err, tc.want)
			}
		})
	}
}

// imageSource is a module image's content on the host: a module of two small
// files, a runtime and a provider mirror whose binary is bigger than the
// ID hashes, and a mirror link, as hack/tools lays them out.
type imageSource struct {
	module, runtime, providers string
}

func newSource(t *testing.T) imageSource {
	t.Helper()
	dir := t.TempDir()
	s := imageSource{module: filepath.Join(dir, "module"), runtime: filepath.Join(dir, "bin", "tofu"), providers: filepath.Join(dir, "providers")}
	write(t, filepath.Join(s.module, "main.tf"), "resource \"terraform_data\" \"x\" {}\n", 0o644)
	write(t, filepath.Join(s.module, "outputs.tf"), "output \"x\" { value = 1 }\n", 0o644)
	big(t, s.runtime)
	pkg := filepath.Join(s.providers, "registry.opentofu.org", "hashicorp", "null", "1.0.0", "linux_amd64")
	big(t, filepath.Join(pkg, "terraform-provider-null_v1.0.0"))
	other := filepath.Join(s.providers, "registry.terraform.io", "hashicorp", "null", "1.0.0")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../../../registry.opentofu.org/hashicorp/null/1.0.0/linux_amd64", filepath.Join(other, "linux_amd64")); err != nil {
		t.Fatal(err)
	}
	return s
}

func (s imageSource) image() Image { return ModuleImage(s.module, s.runtime, s.providers) }

func write(t *testing.T, p, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

// big writes an executable bigger than the ID hashes (sparse: cheap).
func big(t *testing.T, p string) {
	t.Helper()
	write(t, p, "#!binary", 0o755)
	if err := os.Truncate(p, hashedContentBytes+1); err != nil {
		t.Fatal(err)
	}
}

func sameFile(t *testing.T, a, b string) bool {
	t.Helper()
	sa, err := os.Stat(a)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := os.Stat(b)
	if err != nil {
		t.Fatal(err)
	}
	return os.SameFile(sa, sb)
}

// builds lists the build directories of a tag.
func builds(t *testing.T, dir string) []string {
	t.Helper()
	matches, err := filepath.Glob(filepath.Join(filepath.Dir(dir), buildPrefix(dir)+"*"))
	if err != nil {
		t.Fatal(err)
	}
	return matches
}

// A written image is the image contract's layout under the reference's
// directory: the module copied, the big binaries hard-linked, the mirror's
// links kept; its ID is the ID of the same image in memory.
func TestWriteImageLayout(t *testing.T) {
	src, store := newSource(t), t.TempDir()
	const ref = "local/noop:tofu"
	got, err := WriteImage(store, ref, src.image())
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(store, "local", "noop", "tofu")
	mem, err := resolveImage(ref, src.image())
	if err != nil {
		t.Fatal(err)
	}
	if got.Dir != root || !got.Changed || got.ID != mem.id {
		t.Errorf("WriteImage = %+v; want Dir %s, Changed, ID %s", got, root, mem.id)
	}
	inImage := func(p string) string { return filepath.Join(root, filepath.FromSlash(p)) }
	if data, err := os.ReadFile(inImage(jobs.ModuleDir + "/main.tf")); err != nil || !strings.Contains(string(data), "terraform_data") {
		t.Errorf("the module's main.tf is not in the image: %v", err)
	}
	if sameFile(t, inImage(jobs.ModuleDir+"/main.tf"), filepath.Join(src.module, "main.tf")) {
		t.Error("the module is linked, want a copy (an edit of the checkout must not change a built image)")
	}
	if !sameFile(t, inImage(jobs.RuntimePath), src.runtime) {
		t.Error("the runtime is not hard-linked")
	}
	if st, err := os.Stat(inImage(jobs.RuntimePath)); err != nil || st.Mode().Perm() != 0o755 {
		t.Errorf("the runtime is %v, %v; want an executable", st, err)
	}
	link := inImage(jobs.ProvidersDir + "/registry.terraform.io/hashicorp/null/1.0.0/linux_amd64")
	if target, err := os.Readlink(link); err != nil || !strings.HasPrefix(target, "../") {
		t.Errorf("the mirror's link is %q, %v; want the same relative link", target, err)
	}
	if !sameFile(t, filepath.Join(link, "terraform-provider-null_v1.0.0"), filepath.Join(src.providers, "registry.opentofu.org/hashicorp/null/1.0.0/linux_amd64/terraform-provider-null_v1.0.0")) {
		t.Error("the provider binary is not hard-linked")
	}
	img, err := rootImage(root)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{jobs.ModuleDir: inImage(jobs.ModuleDir), jobs.RuntimePath: inImage(jobs.RuntimePath), jobs.ProvidersDir: inImage(jobs.ProvidersDir)}
	if !reflect.DeepEqual(img.Paths, want) {
		t.Errorf("the image read back has the paths %v, want %v", img.Paths, want)
	}
}

// Writing the same content again changes nothing; an edit of the module
// or a rebuilt runtime writes a new build, which replaces the old one.
func TestWriteImageRebuildsOnlyWhatChanged(t *testing.T) {
	src, store := newSource(t), t.TempDir()
	const ref = "local/noop:tofu"
	first, err := WriteImage(store, ref, src.image())
	if err != nil {
		t.Fatal(err)
	}
	target, _ := os.Readlink(first.Dir)
	again, err := WriteImage(store, ref, src.image())
	if err != nil {
		t.Fatal(err)
	}
	if again.Changed || again.ID != first.ID {
		t.Errorf("writing the same image again = %+v; want unchanged, ID %s", again, first.ID)
	}
	if now, _ := os.Readlink(first.Dir); now != target {
		t.Errorf("the tag moved from %s to %s with nothing changed", target, now)
	}

	write(t, filepath.Join(src.module, "main.tf"), "resource \"terraform_data\" \"y\" {}\n", 0o644)
	edited, err := WriteImage(store, ref, src.image())
	if err != nil {
		t.Fatal(err)
	}
	if !edited.Changed || edited.ID == first.ID {
		t.Errorf("after a module edit WriteImage = %+v; want a new image", edited)
	}
	if data, _ := os.ReadFile(filepath.Join(edited.Dir, "captf", "module", "main.tf")); !strings.Contains(string(data), `"y"`) {
		t.Errorf("the image holds the old module: %s", data)
	}
	if b := builds(t, first.Dir); len(b) != 1 {
		t.Errorf("the tag has builds %v, want only the current one", b)
	}

	if err := os.Remove(src.runtime); err != nil { // a rebuild: a new file
		t.Fatal(err)
	}
	big(t, src.runtime)
	rebuilt, err := WriteImage(store, ref, src.image())
	if err != nil {
		t.Fatal(err)
	}
	if !rebuilt.Changed || !sameFile(t, filepath.Join(rebuilt.Dir, "captf", "runtime"), src.runtime) {
		t.Errorf("after a runtime rebuild WriteImage = %+v; want the new runtime linked", rebuilt)
	}
}

// Writers of one store take turns and agree on the result.
func TestWriteImageConcurrently(t *testing.T) {
	src, store := newSource(t), t.TempDir()
	var wg sync.WaitGroup
	ids := make([]string, 4)
	for i := range ids {
		wg.Go(func() {
			got, err := WriteImage(store, "local/noop:tofu", src.image())
			if err != nil {
				t.Error(err)
			}
			ids[i] = got.ID
		})
	}
	wg.Wait()
	for _, id := range ids[1:] {
		if id != ids[0] {
			t.Errorf("concurrent writes gave the IDs %v", ids)
		}
	}
	if b := builds(t, filepath.Join(store, "local", "noop", "tofu")); len(b) != 1 {
		t.Errorf("the tag has builds %v, want one", b)
	}
}

// A directory made by hand at a tag is replaced by a written image.
func TestWriteImageReplacesAHandMadeDirectory(t *testing.T) {
	src, store := newSource(t), t.TempDir()
	write(t, filepath.Join(store, "local", "noop", "tofu", "captf", "module", "old.tf"), "", 0o644)
	got, err := WriteImage(store, "local/noop:tofu", src.image())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(got.Dir, "captf", "module", "old.tf")); !os.IsNotExist(err) {
		t.Errorf("the hand-made image is still there: %v", err)
	}
}

func TestWriteImageRefusals(t *testing.T) {
	src, store := newSource(t), t.TempDir()
	testCases := []struct {
		name, ref string
		img       Image
	}{
		{"a digest reference", "local/noop@sha256:" + strings.Repeat("a", 64), src.image()},
		{"a path below a top-level directory's entries", "local/noop:deep", Image{Paths: map[string]string{"/opt/probe/marker": src.runtime}}},
		{"the root", "local/noop:root", Image{Paths: map[string]string{"/": src.module}}},
		{"a missing path", "local/noop:missing", ModuleImage(filepath.Join(src.module, "nothing"), src.runtime, "")},
		{"no path", "local/noop:empty", Image{}},
		{"a repository outside the store", "../noop:tofu", src.image()},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			if got, err := WriteImage(store, tc.ref, tc.img); err == nil {
				t.Errorf("WriteImage(%s) = %+v, want an error", tc.ref, got)
			}
		})
	}
	if entries, _ := os.ReadDir(store); len(entries) != 0 {
		t.Errorf("refused writes left files in the store: %v", entries)
	}
}

// A node pulls a reference from the store by tag or by digest; a
// reference the store does not hold is an error naming what it looked
// for; in-memory images come first.
func TestPullFromStore(t *testing.T) {
	src, store := newSource(t), t.TempDir()
	written, err := WriteImage(store, "local/noop:tofu", src.image())
	if err != nil {
		t.Fatal(err)
	}
	_, digest, _ := strings.Cut(written.ID, "@")
	// An image laid out by hand, with a top-level file and a deeper one.
	write(t, filepath.Join(store, "local", "shell", "v1", "opt", "probe", "marker"), "from the store", 0o644)
	write(t, filepath.Join(store, "local", "shell", "v1", "runner"), "#!runner", 0o755)
	runner := filepath.Join(t.TempDir(), "runner")
	write(t, runner, "#!memory", 0o755)
	mem, err := resolveImages(map[string]Image{"local/noop:memory": RunnerImage(runner), "local/shell:v1": RunnerImage(runner)})
	if err != nil {
		t.Fatal(err)
	}
	set := imageSet{mem: mem, store: store}

	found := []struct {
		ref, wantRef string
		wantPaths    []string
	}{
		{"local/noop:tofu", "local/noop:tofu", []string{jobs.ModuleDir, jobs.ProvidersDir, jobs.RuntimePath}},
		{"local/noop@" + digest, "local/noop@" + digest, []string{jobs.ModuleDir, jobs.ProvidersDir, jobs.RuntimePath}},
		{"local/noop:tofu@" + digest, "local/noop:tofu@" + digest, []string{jobs.ModuleDir, jobs.ProvidersDir, jobs.RuntimePath}},
		{"local/noop:memory", "local/noop:memory", []string{RunnerPathInImage}},
		{"local/shell:v1", "local/shell:v1", []string{RunnerPathInImage}},
	}
	for _, tc := range found {
		img, err := set.pull(tc.ref)
		if err != nil {
			t.Errorf("pull(%q): %v", tc.ref, err)
			continue
		}
		var paths []string
		for p := range img.Paths {
			paths = append(paths, p)
		}
		if !sameSet(paths, tc.wantPaths) || img.ref != tc.wantRef {
			t.Errorf("pull(%q) = %s with %v; want %s with %v", tc.ref, img.ref, paths, tc.wantRef, tc.wantPaths)
		}
		if strings.HasPrefix(tc.ref, "local/noop") && tc.ref != "local/noop:memory" && img.id != written.ID {
			t.Errorf("pull(%q) has the ID %s, want %s", tc.ref, img.id, written.ID)
		}
	}
	if img, err := (&imageSet{store: store}).pull("local/shell:v1"); err != nil || img.Paths["/opt/probe"] == "" || img.Paths["/runner"] == "" {
		t.Errorf("a hand-made store image = %v, %v; want /opt/probe and /runner", img.Paths, err)
	}

	missing := []struct{ ref, wantMsg string }{
		{"local/noop:terraform", "no directory " + filepath.Join(store, "local", "noop", "terraform") + " (its tags: tofu)"},
		{"local/other:tofu", "no directory " + filepath.Join(store, "local", "other", "tofu")},
		{"local/noop@sha256:" + strings.Repeat("0", 64), "no tag of " + filepath.Join(store, "local", "noop") + " holds"},
		{"local/noop:tofu@sha256:" + strings.Repeat("0", 64), "not sha256:" + strings.Repeat("0", 64)},
		{"local/../noop:tofu", "does not name a repository"},
	}
	for _, tc := range missing {
		_, err := set.pull(tc.ref)
		if err == nil || !strings.Contains(err.Error(), tc.wantMsg) || !strings.Contains(err.Error(), "it has local/noop:memory, local/shell:v1") {
			t.Errorf("pull(%q) = %v; want an error saying %q and the images in memory", tc.ref, err, tc.wantMsg)
		}
	}
	if _, err := (&imageSet{}).pull("local/noop:tofu"); err == nil || !strings.Contains(err.Error(), "no such image") {
		t.Errorf("a node with no image pulled: %v", err)
	}
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	seen := map[string]bool{}
	for _, x := range a {
		seen[x] = true
	}
	for _, x := range b {
		if !seen[x] {
			return false
		}
	}
	return true
}

// StorePath names a tagged reference's directory and refuses the others.
func TestStorePath(t *testing.T) {
	if got, err := StorePath("/s", "local/noop-machine:tofu"); err != nil || got != "/s/local/noop-machine/tofu" {
		t.Errorf("StorePath = %q, %v", got, err)
	}
	for _, ref := range []string{"local/noop@sha256:" + strings.Repeat("a", 64), "a/../b:c"} {
		if got, err := StorePath("/s", ref); err == nil {
			t.Errorf("StorePath(%q) = %q, want an error", ref, got)
		}
	}
}

// A stored image's labels are served as a registry serves its config's:
// written with the image, replaced or removed with it, never in its root.
func TestImageLabels(t *testing.T) {
	store, src := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "main.tf"), []byte("# module\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	img := Image{Paths: map[string]string{"/captf/module": src}, Labels: map[string]string{"io.captf.runtime": "tofu", "io.captf.role": "machine"}}
	if _, err := WriteImage(store, "local/m:tofu", img); err != nil {
		t.Fatal(err)
	}
	got, err := ImageLabels(store, "local/m:tofu")
	if err != nil || got["io.captf.runtime"] != "tofu" || got["io.captf.role"] != "machine" || len(got) != 2 {
		t.Fatalf("labels %v, %v", got, err)
	}
	root, err := rootImage(filepath.Join(store, "local", "m", "tofu"))
	if err != nil || len(root.Paths) != 1 {
		t.Fatalf("the image's root holds %v (%v); want only its module", root.Paths, err)
	}
	img.Labels = map[string]string{"io.captf.runtime": "terraform"}
	if _, err := WriteImage(store, "local/m:tofu", img); err != nil {
		t.Fatal(err)
	}
	if got, err := ImageLabels(store, "local/m:tofu"); err != nil || got["io.captf.runtime"] != "terraform" || len(got) != 1 {
		t.Fatalf("relabelled: %v, %v", got, err)
	}
	img.Labels = nil
	if _, err := WriteImage(store, "local/m:tofu", img); err != nil {
		t.Fatal(err)
	}
	if got, err := ImageLabels(store, "local/m:tofu"); err != nil || got != nil {
		t.Fatalf("unlabelled: %v, %v", got, err)
	}
	if _, err := ImageLabels(store, "local/other:tofu"); !errors.Is(err, ErrNoImage) {
		t.Fatalf("an image the store lacks: %v", err)
	}
}
