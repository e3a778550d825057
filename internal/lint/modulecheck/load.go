package modulecheck

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"captf.io/captf/internal/lint"
	"captf.io/captf/pkg/contract"
)

// maxFileBytes bounds one module file; a module file this large is not
// a module a human wrote.
var maxFileBytes int64 = 16 << 20

// maxModules bounds the local modules one module may call, nested.
const maxModules = 256

// file is one configuration file of a module.
type file struct {
	rel    string // path relative to the root module's directory
	json   bool
	tofu   bool
	src    []byte
	body   hcl.Body
	syntax *hclsyntax.Body // nil for JSON files
}

// loader reads a root module and the local modules it calls.
type loader struct {
	root     string // the root module's directory, symlinks resolved
	parser   *hclparse.Parser
	modules  map[string]*module // by directory, symlinks resolved
	loading  map[string]bool    // the modules being loaded: the call stack
	findings []lint.Finding
}

// moduleFiles lists the configuration files of dir the runtimes read,
// sorted with override files last (the runtimes merge them into what the
// other files declare), and the pairs where a .tofu file shadows a .tf
// file (OpenTofu then reads only the .tofu one): x.tofu shadows x.tf and
// x.tofu.json shadows x.tf.json.
func moduleFiles(dir string) (names []string, shadowed map[string]string, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, err
	}
	present := map[string]bool{}
	for _, e := range entries {
		if contract.IsModuleFile(e.Name()) && !e.IsDir() {
			names = append(names, e.Name())
			present[e.Name()] = true
		}
	}
	sort.SliceStable(names, func(i, j int) bool {
		oi, oj := isOverride(names[i]), isOverride(names[j])
		if oi != oj {
			return oj
		}
		return names[i] < names[j]
	})
	shadowed = map[string]string{}
	for _, name := range names {
		suffix := contract.ModuleFileSuffix(name)
		if strings.HasPrefix(suffix, ".tofu") {
			continue
		}
		tofu := strings.TrimSuffix(name, suffix) + strings.Replace(suffix, ".tf", ".tofu", 1)
		if present[tofu] {
			shadowed[name] = tofu
		}
	}
	return names, shadowed, nil
}

// isOverride tells whether a file is an override file: override.tf or
// <name>_override.tf (any suffix).
func isOverride(name string) bool {
	base := strings.TrimSuffix(name, contract.ModuleFileSuffix(name))
	return base == "override" || strings.HasSuffix(base, "_override")
}

// readFile parses one file of dir, refusing one that is a link leading
// out of the root module (module/source-escape).
func (l *loader) readFile(dir, name string) (*file, error) {
	path := filepath.Join(dir, name)
	rel := l.rel(path)
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		l.add(idSourceEscape, rel, 0, "the file is a link that does not resolve: make it a regular file inside the module")
		return nil, nil
	}
	if !within(l.root, real) {
		l.add(idSourceEscape, rel, 0, "the file is a link to a file outside the module directory, which the module image will not hold: copy the file into the module")
		return nil, nil
	}
	info, err := os.Stat(real)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rel, err)
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%s): a module file must be one", rel, info.Mode().Type())
	}
	if info.Size() > maxFileBytes {
		return nil, fmt.Errorf("%s: %d bytes, more than the %d a module file may have", rel, info.Size(), maxFileBytes)
	}
	src, err := os.ReadFile(real)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rel, err)
	}
	if d := nesting(src); d > maxNesting {
		return nil, fmt.Errorf("%s: brackets nest %d deep, more than the %d a module file may", rel, d, maxNesting)
	}
	f := &file{rel: rel, src: src, tofu: strings.HasPrefix(contract.ModuleFileSuffix(name), ".tofu")}
	var hf *hcl.File
	var diags hcl.Diagnostics
	if strings.HasSuffix(name, ".json") {
		f.json = true
		hf, diags = l.parser.ParseJSON(src, rel)
	} else {
		hf, diags = l.parser.ParseHCL(src, rel)
	}
	if diags.HasErrors() {
		return nil, syntaxError(diags)
	}
	f.body = hf.Body
	f.syntax, _ = hf.Body.(*hclsyntax.Body)
	return f, nil
}

// rel returns path relative to the root module's directory, with
// forward slashes.
func (l *loader) rel(path string) string {
	r, err := filepath.Rel(l.root, path)
	if err != nil {
		return path
	}
	return filepath.ToSlash(r)
}

// within tells whether path is dir or below it.
func within(dir, path string) bool {
	r, err := filepath.Rel(dir, path)
	return err == nil && r != ".." && !strings.HasPrefix(r, "../") && !filepath.IsAbs(r)
}

// isLocalSource tells whether a module call's source is a local path,
// the only kind the module image carries.
func isLocalSource(s string) bool {
	return s == "." || s == ".." || strings.HasPrefix(s, "./") || strings.HasPrefix(s, "../")
}

// loadModule reads the module in dir and, depth first, the local modules
// it calls.
func (l *loader) loadModule(dir string) (*module, error) {
	if m, ok := l.modules[dir]; ok {
		return m, nil
	}
	if len(l.modules) >= maxModules {
		return nil, fmt.Errorf("%s: more than %d local modules", l.rel(dir), maxModules)
	}
	m := newModule(dir, l.rel(dir))
	l.modules[dir] = m
	l.loading[dir] = true
	defer delete(l.loading, dir)
	names, shadowed, err := moduleFiles(dir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", l.rel(dir), err)
	}
	byName := map[string]*file{}
	for _, name := range names {
		f, err := l.readFile(dir, name)
		if err != nil {
			return nil, err
		}
		if f != nil {
			byName[name] = f
		}
	}
	for _, name := range names {
		f := byName[name]
		if f == nil {
			continue
		}
		if tofu, ok := shadowed[name]; ok {
			if byName[tofu] != nil {
				m.shadows = append(m.shadows, shadow{tf: f, tofu: byName[tofu]})
			}
			continue
		}
		m.files = append(m.files, f)
		if err := m.decode(f, isOverride(name)); err != nil {
			return nil, err
		}
	}
	for _, c := range m.calls {
		if err := l.resolveCall(m, c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// resolveCall loads the local module a call names, or reports the call
// when its source leads out of the root module or nowhere.
func (l *loader) resolveCall(m *module, c *call) error {
	if !isLocalSource(c.source) {
		return nil
	}
	target := filepath.Join(m.dir, filepath.FromSlash(c.source))
	real, err := filepath.EvalSymlinks(target)
	if err != nil {
		l.add(idSourceEscape, c.file.rel, c.line, fmt.Sprintf("module %q: source %q does not resolve to a directory: fix the path or add the module to the module directory", c.name, c.source))
		return nil
	}
	if !within(l.root, real) {
		l.add(idSourceEscape, c.file.rel, c.line, fmt.Sprintf("module %q: source %q leads outside the module directory, which the module image will not hold: move the called module inside it", c.name, c.source))
		return nil
	}
	info, err := os.Stat(real)
	if err != nil || !info.IsDir() {
		l.add(idSourceEscape, c.file.rel, c.line, fmt.Sprintf("module %q: source %q is not a directory", c.name, c.source))
		return nil
	}
	if l.loading[real] {
		l.add(idSourceEscape, c.file.rel, c.line, fmt.Sprintf("module %q: source %q calls a module that is calling it (itself, or one of its callers), which no runtime can install: break the cycle", c.name, c.source))
		return nil
	}
	sub, err := l.loadModule(real)
	if err != nil {
		return err
	}
	c.target = sub
	return nil
}

// load reads the root module in dir.
func load(dir string) (*loader, *module, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, nil, err
	}
	root, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, nil, err
	}
	info, err := os.Stat(root)
	if err != nil {
		return nil, nil, err
	}
	if !info.IsDir() {
		return nil, nil, fmt.Errorf("%s is not a directory", dir)
	}
	l := &loader{root: root, parser: hclparse.NewParser(), modules: map[string]*module{}, loading: map[string]bool{}}
	m, err := l.loadModule(root)
	if err != nil {
		return nil, nil, err
	}
	if len(m.files) == 0 && len(m.shadows) == 0 {
		return nil, nil, fmt.Errorf("%s holds no .tf, .tf.json, .tofu or .tofu.json file", dir)
	}
	return l, m, nil
}

// maxNesting bounds how deep brackets nest in a module file: the parser
// recurses once per level.
const maxNesting = 512

// nesting returns how deep the brackets of src nest, outside strings.
func nesting(src []byte) int {
	depth, deepest, inString, escaped := 0, 0, false, false
	for _, c := range src {
		switch {
		case inString && escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case inString:
		case c == '[' || c == '{' || c == '(':
			depth++
			deepest = max(deepest, depth)
		case c == ']' || c == '}' || c == ')':
			depth--
		}
	}
	return deepest
}

// syntaxError says where a file fails to parse and why, with the parser's
// summaries only: its details may quote the file, which may hold a secret.
func syntaxError(diags hcl.Diagnostics) error {
	var msgs []string
	for _, d := range diags {
		if d.Severity != hcl.DiagError {
			continue
		}
		at := ""
		if d.Subject != nil {
			at = d.Subject.String() + ": "
		}
		msgs = append(msgs, at+d.Summary)
		if len(msgs) == 5 {
			break
		}
	}
	return errors.New(strings.Join(msgs, "; "))
}
