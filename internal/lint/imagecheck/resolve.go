package imagecheck

import (
	"archive/tar"
	"strings"
)

// maxLinks is how many symbolic links a path may go through, as Linux.
const maxLinks = 40

// resolve follows p through the image's symbolic links (its last
// component's too when follow), as the kernel would in a container of the
// image. It returns the entry (nil when there is none, or past maxLinks),
// its path without links, and the link targets met.
func (f *fsys) resolve(p string, follow bool) (*node, string, []string) {
	type step struct {
		name string
		n    *node
	}
	var stack []step
	var links []string
	comps := strings.Split(p, "/")
	for len(comps) > 0 {
		c := comps[0]
		comps = comps[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			continue
		}
		cur := f.root
		if len(stack) > 0 {
			cur = stack[len(stack)-1].n
		}
		next := cur.child(c)
		if next == nil {
			return nil, joinSteps(len(stack), func(i int) string { return stack[i].name }) + "/" + c, links
		}
		if next.kind == tar.TypeSymlink && (len(comps) > 0 || follow) {
			if len(links) == maxLinks {
				return nil, p, links
			}
			links = append(links, next.link)
			if strings.HasPrefix(next.link, "/") {
				stack = stack[:0]
			}
			comps = append(strings.Split(next.link, "/"), comps...)
			continue
		}
		stack = append(stack, step{c, next})
	}
	canon := joinSteps(len(stack), func(i int) string { return stack[i].name })
	if len(stack) == 0 {
		return f.root, "/", links
	}
	return stack[len(stack)-1].n, canon, links
}

func joinSteps(n int, name func(int) string) string {
	var b strings.Builder
	for i := range n {
		b.WriteString("/")
		b.WriteString(name(i))
	}
	return b.String()
}

// lookup is the entry at p itself (a link is not followed), nil when
// absent.
func (f *fsys) lookup(p string) *node {
	n, _, _ := f.resolve(p, false)
	return n
}
