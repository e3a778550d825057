package imagecheck

import (
	"archive/tar"
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"captf.io/captf/internal/lint"
)

// The default registry hosts of a provider source without one, by
// runtime.
var defaultHosts = map[string]string{runtimeTofu: "registry.opentofu.org", runtimeTerraform: "registry.terraform.io"}

// Names of the mirror layouts (both runtimes read both).
var (
	hostRE    = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9.-]*(:[0-9]+)?$`)
	partRE    = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]*$`)
	versionRE = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)
	targetRE  = regexp.MustCompile(`^[a-z0-9]+_[a-z0-9]+$`)
)

// maxMirrorFindings is how many findings of one ID the mirror checks
// give before summing up the rest.
const maxMirrorFindings = 10

const layoutHint = "a mirror holds HOST/NAMESPACE/TYPE/terraform-provider-TYPE_VERSION_TARGET.zip (with *.json indexes) or HOST/NAMESPACE/TYPE/VERSION/TARGET/, as `providers mirror` writes it"

// mirror is what the provider mirror holds: a package per provider
// address (HOST/NAMESPACE/TYPE, lower case) and target (os_arch).
type mirror struct {
	present  bool
	packages map[[2]string]bool
}

type mirrorCheck struct {
	f        *fsys
	m        mirror
	findings []lint.Finding
}

// checkMirror runs image/providers-absent, image/providers-layout and
// the broken links of image/providers-complete, and lists the packages.
func checkMirror(f *fsys) (mirror, []lint.Finding) {
	c := &mirrorCheck{f: f, m: mirror{packages: map[[2]string]bool{}}}
	root, canon, _ := f.resolve(mirrorDir, false)
	if root == nil {
		return c.m, []lint.Finding{{ID: "image/providers-absent", Severity: lint.Info, File: mirrorDir,
			Message: "the image has no provider mirror at /captf/providers, so init installs providers from their registries and Jobs need egress: run `providers mirror` into it when building the image to ship them"}}
	}
	c.m.present = true
	if root.kind != tar.TypeDir || canon != mirrorDir {
		c.layout(mirrorDir, "is not a directory")
		return c.m, c.findings
	}
	for _, host := range entries(root) {
		hp, h := c.dir(mirrorDir, root, host, hostRE, "a registry host directory")
		for _, ns := range entries(h) {
			np, n := c.dir(hp, h, ns, partRE, "a provider namespace directory")
			for _, typ := range entries(n) {
				tp, t := c.dir(np, n, typ, partRE, "a provider type directory")
				if t != nil {
					c.typeDir(tp, t, strings.ToLower(host+"/"+ns+"/"+typ), typ)
				}
			}
		}
	}
	return c.m, capped(c.findings)
}

// dir is the directory name of parent (at p), a link followed; nil (and
// a finding) when it is not one or its name does not match re.
func (c *mirrorCheck) dir(p string, parent *node, name string, re *regexp.Regexp, want string) (string, *node) {
	cp := path.Join(p, name)
	e := c.follow(cp, parent.children[name])
	if e == nil {
		return cp, nil
	}
	if e.kind != tar.TypeDir || !re.MatchString(name) {
		c.layout(cp, "is not "+want)
		return cp, nil
	}
	return cp, e
}

// follow is e, or what the link e ends at; nil (and a finding) for a
// broken link.
func (c *mirrorCheck) follow(p string, e *node) *node {
	if e.kind != tar.TypeSymlink {
		return e
	}
	t, _, _ := c.f.resolve(p, true)
	if t == nil {
		c.findings = append(c.findings, lint.Finding{ID: "image/providers-complete", Severity: lint.Error, File: p,
			Message: fmt.Sprintf("the link to %q does not resolve in the image, so the mirror misses what it names: copy the files themselves into the mirror", e.link)})
	}
	return t
}

func (c *mirrorCheck) layout(p, what string) {
	c.findings = append(c.findings, lint.Finding{ID: "image/providers-layout", Severity: lint.Error, File: p,
		Message: fmt.Sprintf("%s %s: %s; remove it or move it there", p, what, layoutHint)})
}

func (c *mirrorCheck) broken(p, what string) {
	c.findings = append(c.findings, lint.Finding{ID: "image/providers-complete", Severity: lint.Error, File: p,
		Message: fmt.Sprintf("%s %s: run `providers mirror` again into /captf/providers", p, what)})
}

// typeDir reads the packages of one provider: packed archives, their
// JSON indexes, and unpacked VERSION/TARGET directories.
func (c *mirrorCheck) typeDir(p string, dir *node, addr, typ string) {
	exe := "terraform-provider-" + typ
	for _, name := range entries(dir) {
		cp := path.Join(p, name)
		e := c.follow(cp, dir.children[name])
		switch {
		case e == nil:
		case e.kind == tar.TypeDir && versionRE.MatchString(name):
			for _, target := range entries(e) {
				tp := path.Join(cp, target)
				t := c.follow(tp, e.children[target])
				switch {
				case t == nil:
				case t.kind != tar.TypeDir || !targetRE.MatchString(target):
					c.layout(tp, "is not a target directory (such as linux_amd64)")
				case !slices.ContainsFunc(entries(t), func(n string) bool { return strings.HasPrefix(n, exe) }):
					c.layout(tp, "holds no "+exe+" executable")
				default:
					c.m.packages[[2]string{addr, target}] = true
				}
			}
		case e.kind != tar.TypeReg:
			c.layout(cp, "is not an archive, an index or a version directory")
		case name == "index.json":
			c.index(cp, e, p)
		case strings.HasSuffix(name, ".json") && versionRE.MatchString(strings.TrimSuffix(name, ".json")):
			c.versionIndex(cp, e, p)
		default:
			target, ok := archiveTarget(name, typ)
			if !ok {
				c.layout(cp, "is not named "+exe+"_VERSION_TARGET.zip")
				continue
			}
			c.m.packages[[2]string{addr, target}] = true
		}
	}
}

// archiveTarget is the target of a packed archive name of provider typ.
func archiveTarget(name, typ string) (string, bool) {
	rest, ok := strings.CutPrefix(name, "terraform-provider-"+typ+"_")
	if !ok {
		return "", false
	}
	if rest, ok = strings.CutSuffix(rest, ".zip"); !ok {
		return "", false
	}
	parts := strings.Split(rest, "_")
	if len(parts) < 3 {
		return "", false
	}
	target := strings.Join(parts[len(parts)-2:], "_")
	version := strings.Join(parts[:len(parts)-2], "_")
	return target, versionRE.MatchString(version) && targetRE.MatchString(target)
}

// index checks an index.json: every version it lists has its VERSION.json.
func (c *mirrorCheck) index(p string, n *node, dir string) {
	if n.data == nil {
		return // kept only inside the mirror
	}
	var idx struct {
		Versions map[string]json.RawMessage `json:"versions"`
	}
	if json.Unmarshal(n.data, &idx) != nil || idx.Versions == nil {
		c.layout(p, `is not a provider mirror index ({"versions": {...}})`)
		return
	}
	for _, v := range slices.Sorted(maps.Keys(idx.Versions)) {
		if !versionRE.MatchString(v) {
			c.layout(p, "lists a version that is no version")
		} else if t, _, _ := c.f.resolve(path.Join(dir, v+".json"), true); t == nil {
			c.broken(p, fmt.Sprintf("lists version %s, whose %s.json is missing", v, v))
		}
	}
}

// versionIndex checks a VERSION.json: every archive it names is there.
func (c *mirrorCheck) versionIndex(p string, n *node, dir string) {
	if n.data == nil {
		return
	}
	var idx struct {
		Archives map[string]struct {
			URL string `json:"url"`
		} `json:"archives"`
	}
	if json.Unmarshal(n.data, &idx) != nil || idx.Archives == nil {
		c.layout(p, `is not a provider version index ({"archives": {...}})`)
		return
	}
	for _, target := range slices.Sorted(maps.Keys(idx.Archives)) {
		url := idx.Archives[target].URL
		if url == "" || strings.Contains(url, "://") {
			continue
		}
		ref := path.Join(dir, url)
		if t, _, _ := c.f.resolve(ref, true); t == nil || t.kind != tar.TypeReg {
			c.broken(p, fmt.Sprintf("names the archive %s for %s, which is missing", ref, target))
		}
	}
}

// capped keeps maxMirrorFindings findings of each ID, and sums up the
// rest in one more.
func capped(findings []lint.Finding) []lint.Finding {
	var out []lint.Finding
	count := map[string]int{}
	for _, f := range findings {
		if count[f.ID]++; count[f.ID] <= maxMirrorFindings {
			out = append(out, f)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(count)) {
		if n := count[id] - maxMirrorFindings; n > 0 {
			out = append(out, lint.Finding{ID: id, Severity: lint.Error, File: mirrorDir,
				Message: fmt.Sprintf("%d more entries of the mirror break %s, as those listed do: fix them alike", n, id)})
		}
	}
	return out
}

// checkProviders runs image/providers-complete for the providers the
// module requires: the mirror holds a package of each for the image's
// platform. A source without a host is the runtime's default registry's.
func checkProviders(m mirror, providers []string, runtime string, plat v1.Platform) []lint.Finding {
	if !m.present || plat.Architecture == "" {
		return nil
	}
	goos := plat.OS
	if goos == "" {
		goos = "linux"
	}
	target := goos + "_" + plat.Architecture
	cli := runtime
	if cli != runtimeTofu && cli != runtimeTerraform {
		cli = "tofu"
	}
	var findings []lint.Finding
	for _, src := range providers {
		addrs := addresses(src, runtime)
		if len(addrs) == 0 || slices.ContainsFunc(addrs, func(a string) bool { return m.packages[[2]string{a, target}] }) {
			continue
		}
		findings = append(findings, lint.Finding{ID: "image/providers-complete", Severity: lint.Error, File: path.Join(mirrorDir, addrs[0]),
			Message: fmt.Sprintf("the mirror has no package of provider %s for %s, which the module requires: run `%s providers mirror -platform=%s /captf/providers` (after `%s get`) when building the image", src, target, cli, target, cli)})
	}
	return findings
}

// addresses are where the mirror may hold the provider src: its
// HOST/NAMESPACE/TYPE (lower case), under each default host when it
// names none; none for a built-in provider or a source that does not
// parse.
func addresses(src, runtime string) []string {
	parts := strings.Split(strings.ToLower(src), "/")
	switch len(parts) {
	case 1:
		parts = []string{"", "hashicorp", parts[0]}
	case 2:
		parts = append([]string{""}, parts...)
	case 3:
	default:
		return nil
	}
	if parts[1] == "" || parts[2] == "" || parts[0] == "terraform.io" && parts[1] == "builtin" {
		return nil
	}
	if parts[0] != "" {
		return []string{strings.Join(parts, "/")}
	}
	hosts := []string{defaultHosts[runtimeTofu], defaultHosts[runtimeTerraform]}
	if h, ok := defaultHosts[runtime]; ok {
		hosts = []string{h}
	}
	var out []string
	for _, h := range hosts {
		out = append(out, h+"/"+parts[1]+"/"+parts[2])
	}
	return out
}
