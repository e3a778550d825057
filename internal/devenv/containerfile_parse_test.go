package devenv_test

import (
	"bufio"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// containerfile is a parsed Containerfile: its global ARGs and its stages.
type containerfile struct {
	path   string
	args   map[string]string // global ARG defaults
	stages []*stage
}

type stage struct {
	name, from string
	args       map[string]bool // ARGs declared in the stage
	instrs     []instr
}

// instr is one instruction: its keyword, --flags and words (a RUN, with
// its heredoc, and an ENTRYPOINT keep their text whole in words[0]).
type instr struct {
	cmd   string
	flags map[string]string
	words []string
}

// parseContainerfile reads the subset of the Containerfile syntax our
// files use: comments, line continuations, heredocs, --flags, AS names.
func parseContainerfile(t *testing.T, path string) *containerfile {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	cf := &containerfile{path: path, args: map[string]string{}}
	sc := bufio.NewScanner(f)
	var line string
	for sc.Scan() {
		text := sc.Text()
		trimmed := strings.TrimSpace(text)
		if line == "" && (trimmed == "" || strings.HasPrefix(trimmed, "#")) {
			continue
		}
		if strings.HasSuffix(text, "\\") {
			line += strings.TrimSuffix(text, "\\") + " "
			continue
		}
		line += text
		if m := regexp.MustCompile(`<<'?(\w+)'?\s*$`).FindStringSubmatch(line); m != nil {
			var body []string
			for sc.Scan() && sc.Text() != m[1] {
				body = append(body, sc.Text())
			}
			line = strings.TrimSuffix(line, m[0]) + "\n" + strings.Join(body, "\n")
		}
		cf.add(t, line)
		line = ""
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(cf.stages) == 0 {
		t.Fatalf("%s has no FROM", path)
	}
	return cf
}

func (cf *containerfile) add(t *testing.T, line string) {
	t.Helper()
	cmd, rest, _ := strings.Cut(strings.TrimSpace(line), " ")
	in := instr{cmd: strings.ToUpper(cmd), flags: map[string]string{}}
	rest = strings.TrimSpace(rest)
	for strings.HasPrefix(rest, "--") {
		var flag string
		flag, rest, _ = strings.Cut(rest, " ")
		name, value, _ := strings.Cut(strings.TrimPrefix(flag, "--"), "=")
		in.flags[name] = value
		rest = strings.TrimSpace(rest)
	}
	if in.cmd == "RUN" || in.cmd == "ENTRYPOINT" {
		in.words = []string{rest}
	} else {
		in.words = splitWords(rest)
	}
	switch {
	case in.cmd == "FROM":
		s := &stage{from: in.words[0], args: map[string]bool{}}
		if len(in.words) == 3 && strings.EqualFold(in.words[1], "AS") {
			s.name = in.words[2]
		}
		cf.stages = append(cf.stages, s)
	case in.cmd == "ARG" && len(cf.stages) == 0:
		name, value, _ := strings.Cut(in.words[0], "=")
		cf.args[name] = value
	case len(cf.stages) == 0:
		t.Fatalf("%s: %s before the first FROM", cf.path, in.cmd)
	case in.cmd == "ARG":
		name, _, _ := strings.Cut(in.words[0], "=")
		cf.last().args[name] = true
		fallthrough
	default:
		cf.last().instrs = append(cf.last().instrs, in)
	}
}

func (cf *containerfile) last() *stage { return cf.stages[len(cf.stages)-1] }

// splitWords splits on spaces outside double quotes, dropping the quotes.
func splitWords(s string) []string {
	var words []string
	var cur strings.Builder
	quoted, inWord := false, false
	for _, r := range s {
		switch {
		case r == '"':
			quoted, inWord = !quoted, true
		case (r == ' ' || r == '\t' || r == '\n') && !quoted:
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

var varRef = regexp.MustCompile(`\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?`)

// expand substitutes ${NAME} and $NAME from vars (empty when unset).
func expand(s string, vars map[string]string) string {
	return varRef.ReplaceAllStringFunc(s, func(m string) string {
		return vars[varRef.FindStringSubmatch(m)[1]]
	})
}

// image is what a build of the last stage with some build args yields.
type image struct {
	copies     []instr // in the order they apply, each COPY's words expanded
	labels     map[string]string
	user       string
	workdir    string
	entrypoint []string
	stages     []*stage // the stages it is built on, base first
}

// expandGlobal expands s with the global ARGs, as a FROM line sees them.
func (cf *containerfile) expandGlobal(s string, buildArgs map[string]string) string {
	global := maps.Clone(cf.args)
	maps.Copy(global, buildArgs)
	return expand(s, global)
}

// build follows the last stage down to its base (FROM a stage of the
// file), collecting what each stage adds.
func (cf *containerfile) build(t *testing.T, buildArgs map[string]string) image {
	t.Helper()
	vars := func(s *stage) map[string]string {
		v := map[string]string{}
		for name := range s.args {
			v[name] = cf.args[name]
			if b, ok := buildArgs[name]; ok {
				v[name] = b
			}
		}
		return v
	}
	global := map[string]string{}
	for name, def := range cf.args {
		global[name] = def
		if b, ok := buildArgs[name]; ok {
			global[name] = b
		}
	}
	var chain []*stage
	for s := cf.last(); s != nil; {
		chain = append([]*stage{s}, chain...)
		from := expand(s.from, global)
		s = nil
		for _, c := range cf.stages {
			if c.name == from {
				s = c
			}
		}
	}
	img := image{labels: map[string]string{}, stages: chain}
	for _, s := range chain {
		v := vars(s)
		for _, in := range s.instrs {
			words := make([]string, len(in.words))
			for i, w := range in.words {
				words[i] = expand(w, v)
			}
			switch in.cmd {
			case "COPY":
				img.copies = append(img.copies, instr{cmd: in.cmd, flags: in.flags, words: words})
			case "LABEL":
				for _, w := range words {
					k, val, _ := strings.Cut(w, "=")
					img.labels[k] = val
				}
			case "USER":
				img.user = words[0]
			case "WORKDIR":
				img.workdir = words[0]
			case "ENTRYPOINT":
				if err := json.Unmarshal([]byte(in.words[0]), &img.entrypoint); err != nil {
					t.Fatalf("%s: ENTRYPOINT is not a JSON array: %v", cf.path, err)
				}
			}
		}
	}
	return img
}

// dest is a COPY's destination, cleaned.
func dest(c instr) string { return filepath.Clean(c.words[len(c.words)-1]) }

// A variable a stage uses must be an ARG of that stage (a global ARG is
// only seen by FROM lines): else it expands empty in a real build.
func checkArgScopes(t *testing.T, cf *containerfile) {
	t.Helper()
	known := map[string]bool{"TARGETOS": true, "TARGETARCH": true, "TARGETPLATFORM": true, "BUILDPLATFORM": true}
	for name := range cf.args {
		known[name] = true
	}
	for _, s := range cf.stages {
		for name := range s.args {
			known[name] = true
		}
	}
	for _, s := range cf.stages {
		for _, in := range s.instrs {
			text := strings.Join(in.words, " ")
			for _, v := range in.flags {
				text += " " + v
			}
			for _, m := range varRef.FindAllStringSubmatch(text, -1) {
				if known[m[1]] && !s.args[m[1]] {
					t.Errorf("%s: stage %q uses $%s in %s without declaring ARG %s", cf.path, s.name, m[1], in.cmd, m[1])
				}
			}
		}
	}
}
