package imagecheck

import (
	"archive/tar"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"captf.io/captf/internal/lint"
	"captf.io/captf/pkg/contract"
)

// reservedPaths are the paths a Job mounts something at, which the image
// must leave absent or empty, and what it mounts there.
var reservedPaths = []struct{ path, mount string }{
	{"/captf/work", "the run's working volume"},
	{"/captf/bin", "the runner binary"},
	{"/captf/config", "the run's inputs"},
	{"/var/run/captf/credentials", "the workload identity credentials"},
}

// maxListed is how many paths one finding lists.
const maxListed = 5

// checkModule runs image/module-present and image/module-link, and makes
// on the host the module's directories and the links that end at a file
// inside it, so that the module checks see the module as the runtime
// would. It tells whether there is a module to check.
func checkModule(f *fsys) ([]lint.Finding, bool, error) {
	n, canon, _ := f.resolve(moduleDir, false)
	switch {
	case n == nil:
		return []lint.Finding{modulePresent("there is no /captf/module: COPY the module's files into /captf/module")}, false, nil
	case n.kind == tar.TypeSymlink || canon != moduleDir:
		return []lint.Finding{{ID: "image/module-link", Severity: lint.Error, File: moduleDir,
			Message: "/captf/module is reached through a symbolic link: COPY the module's files into a /captf/module directory instead"}}, false, nil
	case n.kind != tar.TypeDir:
		return []lint.Finding{modulePresent("/captf/module is not a directory: COPY the module's files into a /captf/module directory")}, false, nil
	}
	if err := os.MkdirAll(f.moduleHost, 0o755); err != nil {
		return nil, false, lint.Unreadable("extracting the module of image %s: %w", f.ref, err)
	}
	var findings []lint.Finding
	var err error
	walk(n, moduleDir, func(p string, e *node) {
		switch {
		case err != nil:
		case e.kind == tar.TypeDir:
			err = os.MkdirAll(f.hostPath(p), 0o755)
		case e.kind == tar.TypeSymlink:
			t, canon, _ := f.resolve(p, true)
			if msg := linkProblem(e, t, canon); msg != "" {
				findings = append(findings, lint.Finding{ID: "image/module-link", Severity: lint.Error, File: p, Message: msg})
				return
			}
			host := f.hostPath(p)
			rel, rerr := filepath.Rel(filepath.Dir(host), f.hostPath(canon))
			if err = rerr; err == nil {
				err = os.Symlink(rel, host)
			}
		}
	})
	if err != nil {
		return nil, false, lint.Unreadable("extracting the module of image %s: %w", f.ref, err)
	}
	for _, name := range slices.Sorted(maps.Keys(n.children)) {
		if !contract.IsModuleFile(name) {
			continue
		}
		if t, canon, _ := f.resolve(moduleDir+"/"+name, true); t != nil && t.kind == tar.TypeReg && inside(canon, moduleDir) {
			return findings, true, nil
		}
	}
	return append(findings, modulePresent("/captf/module holds no .tf, .tf.json, .tofu or .tofu.json file at its top level, so the runner stops before any command: COPY the module's root files there")), false, nil
}

func modulePresent(msg string) lint.Finding {
	return lint.Finding{ID: "image/module-present", Severity: lint.Error, File: moduleDir, Message: msg}
}

// linkProblem says why the link l under the module, resolving to t at
// canon, breaks image/module-link; "" when it ends at a regular file
// inside the module.
func linkProblem(l, t *node, canon string) string {
	const fix = ": a link under /captf/module must end at a regular file inside it; COPY the file itself instead"
	switch {
	case t == nil:
		return fmt.Sprintf("the link to %q does not resolve in the image%s", l.link, fix)
	case t.kind != tar.TypeReg:
		return fmt.Sprintf("the link to %q ends at %s, a %s%s", l.link, canon, kindName(t), fix)
	case !inside(canon, moduleDir):
		return fmt.Sprintf("the link to %q ends at %s, outside /captf/module%s", l.link, canon, fix)
	}
	return ""
}

// checkRuntime runs image/runtime-present and image/runtime-version.
func checkRuntime(f *fsys, u user, runtime string) []lint.Finding {
	present := func(msg string) []lint.Finding {
		return []lint.Finding{{ID: "image/runtime-present", Severity: lint.Error, File: runtimePath, Message: msg}}
	}
	if f.lookup(runtimePath) == nil {
		return present("there is no /captf/runtime, so the runner stops before any command: put the tofu or terraform binary there, or a link to it, as the CAPTF base images do")
	}
	n, canon, links := f.resolve(runtimePath, true)
	switch {
	case n == nil:
		return present(fmt.Sprintf("/captf/runtime is a link that does not resolve in the image (it goes through %s): make it a link to the runtime binary in the image", strings.Join(links, ", ")))
	case n.kind != tar.TypeReg:
		return present(fmt.Sprintf("/captf/runtime resolves to %s, a %s: make it the runtime binary or a link to it", canon, kindName(n)))
	case !u.can(n, permExec):
		return present(fmt.Sprintf("the runtime %s (mode %04o, owner %d:%d) is not executable by the image's user %s: chmod a+x it", canon, n.mode, n.uid, n.gid, u.describe()))
	}
	var findings []lint.Finding
	if runtime != "" && runtime != runtimeTofu && runtime != runtimeTerraform {
		findings = append(findings, lint.Finding{ID: "image/runtime-version", Severity: lint.Warning, File: runtimePath,
			Message: fmt.Sprintf("label %s is %q, neither %s nor %s: set it to the runtime /captf/runtime is", labelRuntime, runtime, runtimeTofu, runtimeTerraform)})
	}
	names := append(slices.Clone(links), canon)
	for _, name := range names {
		if other := runtimeOf(path.Base(name)); other != "" && runtime != "" && other != runtime {
			findings = append(findings, lint.Finding{ID: "image/runtime-version", Severity: lint.Warning, File: runtimePath,
				Message: fmt.Sprintf("/captf/runtime is %s, whose name says %s, but label %s says %s: fix the label or the link", canon, other, labelRuntime, runtime)})
			break
		}
	}
	return findings
}

// runtimeOf is the runtime a file name suggests, "" for none or both.
func runtimeOf(name string) string {
	tofu, terraform := strings.Contains(name, "tofu"), strings.Contains(name, "terraform")
	switch {
	case tofu && !terraform:
		return runtimeTofu
	case terraform && !tofu:
		return runtimeTerraform
	}
	return ""
}

// checkReserved runs image/reserved-paths: the paths a Job mounts at are
// absent or empty directories.
func checkReserved(f *fsys) []lint.Finding {
	var findings []lint.Finding
	for _, r := range reservedPaths {
		parent, _, _ := f.resolve(path.Dir(r.path), true)
		n := parent.child(path.Base(r.path))
		if n == nil {
			continue
		}
		msg := ""
		if n.kind != tar.TypeDir {
			msg = fmt.Sprintf("%s is a %s, where a Job mounts %s: remove it", r.path, kindName(n), r.mount)
		} else if names := entries(n); len(names) > 0 {
			for i, name := range names {
				names[i] = path.Join(r.path, name)
			}
			msg = fmt.Sprintf("%s holds %s, which a Job hides by mounting %s there: leave it absent or empty", r.path, listed(names), r.mount)
		}
		if msg != "" {
			findings = append(findings, lint.Finding{ID: "image/reserved-paths", Severity: lint.Error, File: r.path, Message: msg})
		}
	}
	return findings
}

// checkEntrypoint runs image/entrypoint.
func checkEntrypoint(cfg v1.Config) []lint.Finding {
	var set []string
	if len(cfg.Entrypoint) > 0 {
		set = append(set, fmt.Sprintf("ENTRYPOINT %q", cfg.Entrypoint))
	}
	if len(cfg.Cmd) > 0 {
		set = append(set, fmt.Sprintf("CMD %q", cfg.Cmd))
	}
	if len(set) == 0 {
		return nil
	}
	return []lint.Finding{{ID: "image/entrypoint", Severity: lint.Info, File: lint.Whole,
		Message: fmt.Sprintf("the image sets %s: a Job runs the runner instead, so this only serves manual runs", strings.Join(set, " and "))}}
}

// checkReadable runs image/module-readable: a known non-root user can
// traverse /captf, and read and traverse all of the module and the
// mirror (what their links end at included).
func checkReadable(f *fsys, u user) []lint.Finding {
	if !u.known || u.uid == 0 {
		return nil
	}
	var findings []lint.Finding
	for i, root := range []string{moduleDir, mirrorDir} {
		n, canon, _ := f.resolve(root, false)
		if n == nil || n.kind != tar.TypeDir || canon != root {
			continue
		}
		var bad []string
		check := func(p string, e *node) {
			if e.kind == tar.TypeSymlink {
				if e, _, _ = f.resolve(p, true); e == nil {
					return
				}
			}
			want := int64(permRead)
			switch {
			case e.kind == tar.TypeDir:
				want |= permExec
			case e.kind != tar.TypeReg:
				return
			}
			if !u.can(e, want) {
				bad = append(bad, fmt.Sprintf("%s (%s, mode %04o, owner %d:%d)", p, kindName(e), e.mode, e.uid, e.gid))
			}
		}
		if i == 0 {
			for _, anc := range []string{"/", "/captf"} {
				if a := f.lookup(anc); a != nil && !u.can(a, permExec) {
					bad = append(bad, fmt.Sprintf("%s (directory, mode %04o, owner %d:%d)", anc, a.mode, a.uid, a.gid))
				}
			}
		}
		check(root, n)
		walk(n, root, check)
		if len(bad) > 0 {
			findings = append(findings, lint.Finding{ID: "image/module-readable", Severity: lint.Warning, File: root,
				Message: fmt.Sprintf("the image's user %s (uid %d) cannot read or traverse %s: give them to it (COPY --chown=%d:%d) or make them readable by all (chmod -R a+rX)", u.describe(), u.uid, listed(bad), u.uid, u.uid)})
		}
	}
	return findings
}

// walk visits the entries under n, at p, depth first in name order,
// without following links.
func walk(n *node, p string, visit func(p string, n *node)) {
	for _, name := range slices.Sorted(maps.Keys(n.children)) {
		c := n.children[name]
		if c.tomb != 0 {
			continue
		}
		cp := path.Join(p, name)
		visit(cp, c)
		if c.kind == tar.TypeDir {
			walk(c, cp, visit)
		}
	}
}

// entries are the names in the directory n.
func entries(n *node) []string {
	if n == nil {
		return nil
	}
	var names []string
	for _, name := range slices.Sorted(maps.Keys(n.children)) {
		if n.children[name].tomb == 0 {
			names = append(names, name)
		}
	}
	return names
}

// listed names at most maxListed items, and how many more there are.
func listed(items []string) string {
	s := fmt.Sprintf("%d path(s): %s", len(items), strings.Join(items[:min(len(items), maxListed)], ", "))
	if len(items) > maxListed {
		s += fmt.Sprintf(" and %d more", len(items)-maxListed)
	}
	return s
}

func kindName(n *node) string {
	switch n.kind {
	case tar.TypeDir:
		return "directory"
	case tar.TypeReg:
		return "regular file"
	case tar.TypeSymlink:
		return "symbolic link"
	}
	return "special file"
}
