package imagecheck

import (
	"testing"

	"captf.io/captf/internal/lint"
)

// Layers apply in order: a whiteout or an opaque directory of an upper
// layer hides what lower layers hold there, an upper entry replaces a
// lower one, and the module checks see the module as the container
// would.
func TestLayers(t *testing.T) {
	testCases := []struct {
		name     string
		change   func(*spec)
		id, file string
		want     bool // the finding is there
		module   seen // what the module checks see, when given
	}{
		{name: "whiteout empties a reserved path", change: func(s *spec) {
			add(s, file("/captf/work/cache", "x", 0o644))
			s.upper = [][]entry{{whiteout("/captf/work/.wh.cache")}}
		}, id: "image/reserved-paths", file: "/captf/work"},
		{name: "whiteout of the reserved directory itself", change: func(s *spec) {
			add(s, file("/captf/work/cache", "x", 0o644))
			s.upper = [][]entry{{whiteout("/captf/.wh.work")}}
		}, id: "image/reserved-paths", file: "/captf/work"},
		{name: "opaque directory hides the lower layers", change: func(s *spec) {
			add(s, file("/captf/work/cache", "x", 0o644))
			s.upper = [][]entry{{dir("/captf/work", 0o755), whiteout("/captf/work/.wh..wh..opq")}}
		}, id: "image/reserved-paths", file: "/captf/work"},
		{name: "opaque directory keeps its own layer's entries", change: func(s *spec) {
			s.upper = [][]entry{{whiteout("/captf/work/.wh..wh..opq"), file("/captf/work/new", "x", 0o644)}}
		}, id: "image/reserved-paths", file: "/captf/work", want: true},
		{name: "a whiteout applies to lower layers only", change: func(s *spec) {
			s.upper = [][]entry{{file("/captf/bin/runner", "x", 0o755)}, {whiteout("/captf/bin/.wh.other")}}
		}, id: "image/reserved-paths", file: "/captf/bin", want: true},
		{name: "directory made again above its whiteout", change: func(s *spec) {
			add(s, file("/captf/work/cache", "x", 0o644))
			s.upper = [][]entry{{whiteout("/captf/.wh.work")}, {dir("/captf/work", 0o755)}}
		}, id: "image/reserved-paths", file: "/captf/work"},
		{name: "opaque directory hides deeper lower entries", change: func(s *spec) {
			s.upper = [][]entry{{dir("/captf/module", 0o755), whiteout("/captf/module/.wh..wh..opq"),
				dir("/captf/module/modules/net", 0o755), file("/captf/module/main.tf", "# v2\n", 0o644)}}
		}, id: "image/module-present", file: "/captf/module", module: seen{"main.tf": "# v2\n"}},
		{name: "module file removed by an upper layer", change: func(s *spec) {
			s.upper = [][]entry{{whiteout("/captf/module/.wh.main.tf")}}
		}, id: "image/module-present", file: "/captf/module", want: true},
		{name: "module file replaced by an upper layer", change: func(s *spec) {
			s.upper = [][]entry{{file("/captf/module/main.tf", "# v2\n", 0o644)}}
		}, id: "image/module-present", file: "/captf/module",
			module: seen{"main.tf": "# v2\n", "modules/net/main.tf": "# submodule\n"}},
		{name: "whole module replaced through an opaque directory", change: func(s *spec) {
			s.upper = [][]entry{{dir("/captf/module", 0o755), whiteout("/captf/module/.wh..wh..opq"), file("/captf/module/other.tofu", "# tofu\n", 0o644)}}
		}, id: "image/module-present", file: "/captf/module", module: seen{"other.tofu": "# tofu\n"}},
		{name: "upper mode wins", change: func(s *spec) {
			s.upper = [][]entry{{entry{path: "/captf/module/main.tf", data: moduleMain, mode: 0o600}}}
		}, id: "image/module-readable", file: "/captf/module", want: true},
		{name: "lower directory's mode applies to an upper layer's files", change: func(s *spec) {
			add(s, entry{path: "/captf/module", dir: true, mode: 0o700})
			s.upper = [][]entry{{file("/captf/module/extra.tf", "# extra\n", 0o644)}}
		}, id: "image/module-readable", file: "/captf/module", want: true},
		{name: "hard link in the module", change: func(s *spec) {
			s.upper = [][]entry{{file("/captf/module/a.tf", "# a\n", 0o644), {path: "/captf/module/b.tf", hard: "/captf/module/a.tf"}}}
		}, id: "image/module-link", file: "/captf/module/b.tf",
			module: seen{"a.tf": "# a\n", "b.tf": "# a\n", "main.tf": moduleMain, "modules/net/main.tf": "# submodule\n"}},
		{name: "hard link replaced by an upper layer", change: func(s *spec) {
			add(s, file("/captf/module/a.tf", "# a\n", 0o644))
			add(s, entry{path: "/captf/module/b.tf", hard: "/captf/module/a.tf"})
			s.upper = [][]entry{{file("/captf/module/b.tf", "# b\n", 0o644)}}
		}, id: "image/module-link", file: "/captf/module/b.tf",
			module: seen{"a.tf": "# a\n", "b.tf": "# b\n", "main.tf": moduleMain, "modules/net/main.tf": "# submodule\n"}},
		{name: "link to a file inside the module", change: func(s *spec) {
			add(s, symlink("/captf/module/modules/net/shared.tf", "../../main.tf"))
		}, id: "image/module-link", file: "/captf/module/modules/net/shared.tf",
			module: seen{"main.tf": moduleMain, "modules/net/main.tf": "# submodule\n", "modules/net/shared.tf": "-> ../../main.tf"}},
		{name: "runtime replaced by an upper layer's link", change: func(s *spec) {
			s.upper = [][]entry{{symlink("/captf/runtime", "/opt/gone")}}
		}, id: "image/runtime-present", file: "/captf/runtime", want: true},
		{name: "file under a path an upper layer made a file", change: func(s *spec) {
			add(s, file("/captf/config/run.json", "x", 0o644))
			s.upper = [][]entry{{whiteout("/captf/.wh.config")}, {file("/captf/work", "x", 0o644)}}
		}, id: "image/reserved-paths", file: "/captf/config"},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			s := clean()
			tc.change(&s)
			findings, _, saw := check(t, s, nullProvider)
			if f, ok := find(findings, tc.id, tc.file); ok != tc.want {
				t.Errorf("finding %s at %s: %v (%+v), want %v; all: %+v", tc.id, tc.file, ok, f, tc.want, findings)
			}
			if tc.module != nil && !equalSeen(saw, tc.module) {
				t.Errorf("the module checks saw %q, want %q", saw, tc.module)
			}
		})
	}
}

func equalSeen(a, b seen) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// An upper layer's file at a reserved path is reported as it stands.
func TestUpperFileAtReservedPath(t *testing.T) {
	s := clean()
	s.upper = [][]entry{{file("/captf/work", "x", 0o644)}}
	findings, _, _ := check(t, s, nullProvider)
	if f, ok := find(findings, "image/reserved-paths", "/captf/work"); !ok || f.Severity != lint.Error {
		t.Fatalf("a file at /captf/work: %+v", findings)
	}
}
