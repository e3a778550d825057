package imagecheck

import (
	"archive/tar"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"captf.io/captf/internal/lint"
)

// user is who a container of the image runs as.
type user struct {
	// spec is the image's USER, as configured.
	spec string
	// uid is the user's, when known: numeric, or a name /etc/passwd
	// resolves.
	uid   int
	known bool
	// gids are the primary group and the groups /etc/group lists the
	// user in.
	gids []int
}

func (u user) root() bool { return u.known && u.uid == 0 }

// describe names the user in a message.
func (u user) describe() string {
	if u.spec == "" {
		return "root (no USER)"
	}
	return fmt.Sprintf("%q", u.spec)
}

// resolveUser reads the image's USER (name or uid, then an optional
// group) as a container runtime does, from the image's /etc/passwd and
// /etc/group: image/user-root when it is root, image/user-unresolved when
// a name is in neither.
func resolveUser(f *fsys, spec string) (user, []lint.Finding) {
	u := user{spec: spec}
	name, group, hasGroup := strings.Cut(spec, ":")
	passwd := records(f, passwdPath)
	var found []string
	if name == "" {
		u.uid, u.known = 0, true
	} else if id, err := strconv.Atoi(name); err == nil && id >= 0 {
		u.uid, u.known = id, true
	}
	for _, r := range passwd {
		if len(r) < 4 {
			continue
		}
		if (u.known && r[2] == strconv.Itoa(u.uid)) || (!u.known && r[0] == name) {
			found = r
			break
		}
	}
	var findings []lint.Finding
	switch {
	case found != nil:
		u.uid, _ = strconv.Atoi(found[2])
		u.known = true
		if gid, err := strconv.Atoi(found[3]); err == nil && !hasGroup {
			u.gids = append(u.gids, gid)
		}
	case !u.known:
		findings = append(findings, unresolved(u, fmt.Sprintf("user %q", name), passwdPath, f))
	}
	if hasGroup {
		gid, err := strconv.Atoi(group)
		if err != nil {
			gid = -1
			for _, r := range records(f, groupPath) {
				if len(r) >= 3 && r[0] == group {
					gid, _ = strconv.Atoi(r[2])
					break
				}
			}
		}
		if gid < 0 {
			findings = append(findings, unresolved(u, fmt.Sprintf("group %q", group), groupPath, f))
		} else {
			u.gids = append(u.gids, gid)
		}
	} else if found == nil && u.known {
		u.gids = append(u.gids, 0)
	}
	if found != nil {
		for _, r := range records(f, groupPath) {
			if len(r) >= 4 && slices.Contains(strings.Split(r[3], ","), found[0]) {
				if gid, err := strconv.Atoi(r[2]); err == nil {
					u.gids = append(u.gids, gid)
				}
			}
		}
	}
	if u.root() {
		findings = append(findings, lint.Finding{ID: "image/user-root", Severity: lint.Warning, File: lint.Whole,
			Message: fmt.Sprintf("the image runs as %s, that is as root: set a numeric non-root USER, such as 65532:65532 as the CAPTF base images do, so that Jobs pass the restricted Pod Security Standard", u.describe())})
	}
	return u, findings
}

func unresolved(u user, what, file string, f *fsys) lint.Finding {
	where := "it does not list it"
	if n := f.lookup(file); n == nil || n.kind != tar.TypeReg {
		where = "the image has no such file"
	}
	return lint.Finding{ID: "image/user-unresolved", Severity: lint.Warning, File: lint.Whole,
		Message: fmt.Sprintf("the image's USER %s names %s, which %s cannot resolve (%s): use a numeric USER, such as 65532:65532, or add it to %s", u.describe(), what, file, where, file)}
}

// records are the colon-separated lines of a kept file (/etc/passwd,
// /etc/group), comments and blank lines left out.
func records(f *fsys, p string) [][]string {
	n := f.lookup(p)
	if n == nil || n.data == nil {
		return nil
	}
	var out [][]string
	for line := range strings.Lines(string(n.data)) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		out = append(out, strings.Split(line, ":"))
	}
	return out
}

// Permission bits asked of an entry.
const (
	permRead = 4
	permExec = 1
)

// can tells whether u may do want to n, by the owner, group or other
// bits that apply to u. Root reads anything and runs a file with any
// execute bit; so does an unknown user, as nothing better is known.
func (u user) can(n *node, want int64) bool {
	if !u.known || u.uid == 0 {
		return want != permExec || n.kind == tar.TypeDir || n.mode&0o111 != 0
	}
	bits := n.mode
	switch {
	case n.uid == u.uid:
		bits >>= 6
	case slices.Contains(u.gids, n.gid):
		bits >>= 3
	}
	return bits&want == want
}
