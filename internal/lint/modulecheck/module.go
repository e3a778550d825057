package modulecheck

import (
	"regexp"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// module is what the checks need of one module directory.
type module struct {
	dir, rel  string
	files     []*file
	shadows   []shadow
	variables map[string]*variable
	outputs   map[string]*output
	calls     []*call
	providers []*block          // provider blocks
	resources []*resource       // resource blocks
	backends  []*block          // terraform { backend "x" } blocks
	clouds    []*block          // terraform { cloud } blocks
	required  map[string]string // required_providers: local name -> source
	refs      []ref             // every var.X reference, with where it is
	types     []string          // resource and data source types
	version   bool              // terraform { required_version } is set
}

// shadow is a .tf file OpenTofu ignores because a .tofu file of the same
// base name exists.
type shadow struct{ tf, tofu *file }

// block is a located block.
type block struct {
	name string
	file *file
	line int
	body hcl.Body
}

type variable struct {
	name      string
	file      *file
	line      int
	typ       hcl.Expression
	def       hcl.Expression
	sensitive hcl.Expression
	nullable  hcl.Expression
}

type output struct {
	name  string
	file  *file
	line  int
	value hcl.Expression
}

type call struct {
	name   string
	source string
	file   *file
	line   int
	args   map[string]hcl.Expression
	target *module // the local module called, once resolved
}

type resource struct {
	typ, name string
	file      *file
	line      int
	ignores   []string // names of the attributes lifecycle.ignore_changes lists
	ignoreAll bool
}

// ref is a reference to an input variable: var.name.
type ref struct {
	name string
	file *file
	rng  hcl.Range
}

func newModule(dir, rel string) *module {
	return &module{
		dir: dir, rel: rel,
		variables: map[string]*variable{},
		outputs:   map[string]*output{},
		required:  map[string]string{},
	}
}

var fileSchema = &hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{
	{Type: "terraform"},
	{Type: "variable", LabelNames: []string{"name"}},
	{Type: "output", LabelNames: []string{"name"}},
	{Type: "module", LabelNames: []string{"name"}},
	{Type: "provider", LabelNames: []string{"name"}},
	{Type: "resource", LabelNames: []string{"type", "name"}},
	{Type: "data", LabelNames: []string{"type", "name"}},
}}

var terraformSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "required_version"}},
	Blocks: []hcl.BlockHeaderSchema{
		{Type: "backend", LabelNames: []string{"type"}},
		{Type: "cloud"},
		{Type: "required_providers"},
	},
}

var variableSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{
	{Name: "type"}, {Name: "default"}, {Name: "sensitive"}, {Name: "nullable"},
}}

var outputSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "value"}}}

var callSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{
	{Name: "source"}, {Name: "version"}, {Name: "count"}, {Name: "for_each"},
	{Name: "providers"}, {Name: "depends_on"},
}}

var resourceSchema = &hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{{Type: "lifecycle"}}}

var lifecycleSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "ignore_changes"}}}

// decode adds the declarations of one file to the module. The checks read
// declarations as written; what the schema does not name is left alone,
// so a valid module never fails here. The arguments of an override file's
// variable or output replace those of the declaration it overrides, as
// the runtimes merge them.
func (m *module) decode(f *file, override bool) error {
	content, _, diags := f.body.PartialContent(fileSchema)
	if diags.HasErrors() {
		return diags
	}
	for _, b := range content.Blocks {
		line := b.DefRange.Start.Line
		switch b.Type {
		case "terraform":
			m.decodeTerraform(f, b)
		case "variable":
			c, _, _ := b.Body.PartialContent(variableSchema)
			v := m.variables[b.Labels[0]]
			if v == nil || !override {
				v = &variable{name: b.Labels[0], file: f, line: line}
				m.variables[v.name] = v
			}
			for name, at := range map[string]*hcl.Expression{"type": &v.typ, "default": &v.def, "sensitive": &v.sensitive, "nullable": &v.nullable} {
				if e := expr(c, name); e != nil || !override {
					*at = e
				}
			}
		case "output":
			c, _, _ := b.Body.PartialContent(outputSchema)
			o := m.outputs[b.Labels[0]]
			if o == nil || !override {
				o = &output{name: b.Labels[0], file: f, line: line}
				m.outputs[o.name] = o
			}
			if e := expr(c, "value"); e != nil || !override {
				o.value = e
			}
		case "module":
			m.calls = append(m.calls, decodeCall(f, b))
		case "provider":
			m.providers = append(m.providers, &block{name: b.Labels[0], file: f, line: line, body: b.Body})
		case "resource":
			m.resources = append(m.resources, decodeResource(f, b))
			m.types = append(m.types, b.Labels[0])
		case "data":
			m.types = append(m.types, b.Labels[0])
		}
	}
	m.refs = append(m.refs, varRefs(f)...)
	return nil
}

func expr(c *hcl.BodyContent, name string) hcl.Expression {
	if a, ok := c.Attributes[name]; ok {
		return a.Expr
	}
	return nil
}

func (m *module) decodeTerraform(f *file, b *hcl.Block) {
	c, _, _ := b.Body.PartialContent(terraformSchema)
	if _, ok := c.Attributes["required_version"]; ok {
		m.version = true
	}
	for _, inner := range c.Blocks {
		at := &block{file: f, line: inner.DefRange.Start.Line, body: inner.Body}
		switch inner.Type {
		case "backend":
			at.name = inner.Labels[0]
			m.backends = append(m.backends, at)
		case "cloud":
			m.clouds = append(m.clouds, at)
		case "required_providers":
			attrs, _ := inner.Body.JustAttributes()
			for name, a := range attrs {
				m.required[name] = providerSource(name, a.Expr)
			}
		}
	}
}

// providerSource reads a required_providers entry: { source = "…" } or a
// bare version string (the source is then implied).
func providerSource(name string, e hcl.Expression) string {
	v, diags := e.Value(nil)
	if diags.HasErrors() || v.IsNull() || !v.IsKnown() || !v.Type().IsObjectType() {
		return ""
	}
	if !v.Type().HasAttribute("source") {
		return ""
	}
	s := v.GetAttr("source")
	if s.IsNull() || !s.IsKnown() || s.Type() != cty.String {
		return ""
	}
	return s.AsString()
}

func decodeCall(f *file, b *hcl.Block) *call {
	c := &call{name: b.Labels[0], file: f, line: b.DefRange.Start.Line, args: map[string]hcl.Expression{}}
	content, remain, _ := b.Body.PartialContent(callSchema)
	if e := expr(content, "source"); e != nil {
		if v, diags := e.Value(nil); !diags.HasErrors() && v.IsKnown() && !v.IsNull() && v.Type() == cty.String {
			c.source = v.AsString()
		}
	}
	attrs, _ := remain.JustAttributes()
	for name, a := range attrs {
		c.args[name] = a.Expr
	}
	return c
}

func decodeResource(f *file, b *hcl.Block) *resource {
	r := &resource{typ: b.Labels[0], name: b.Labels[1], file: f, line: b.DefRange.Start.Line}
	content, _, _ := b.Body.PartialContent(resourceSchema)
	for _, lc := range content.Blocks {
		c, _, _ := lc.Body.PartialContent(lifecycleSchema)
		e := expr(c, "ignore_changes")
		if e == nil {
			continue
		}
		if hcl.ExprAsKeyword(e) == "all" {
			r.ignoreAll = true
			continue
		}
		items, diags := hcl.ExprList(e)
		if diags.HasErrors() {
			continue
		}
		for _, item := range items {
			if hcl.ExprAsKeyword(item) == "all" {
				r.ignoreAll = true
				continue
			}
			t, diags := hcl.RelTraversalForExpr(item)
			if diags.HasErrors() {
				t = quotedTraversal(item)
			}
			r.ignores = append(r.ignores, stepNames(t)...)
		}
	}
	return r
}

// varRefs lists the var.X references of a file. Native syntax is walked
// expression by expression; JSON files are searched as text, as their
// expressions are strings whose meaning depends on the schema.
func varRefs(f *file) []ref {
	var refs []ref
	if f.syntax == nil {
		for _, m := range jsonVarRef.FindAllSubmatchIndex(f.src, -1) {
			refs = append(refs, ref{name: string(f.src[m[2]:m[3]]), file: f})
		}
		return refs
	}
	_ = hclsyntax.VisitAll(f.syntax, func(n hclsyntax.Node) hcl.Diagnostics {
		e, ok := n.(*hclsyntax.ScopeTraversalExpr)
		if !ok || len(e.Traversal) < 2 || e.Traversal.RootName() != "var" {
			return nil
		}
		if a, ok := e.Traversal[1].(hcl.TraverseAttr); ok {
			refs = append(refs, ref{name: a.Name, file: f, rng: e.SrcRange})
		}
		return nil
	})
	return refs
}

var jsonVarRef = regexp.MustCompile(`var\.([A-Za-z_][A-Za-z0-9_-]*)`)

// quotedTraversal reads an attribute named in a string, as older modules
// write ignore_changes = ["desired_capacity"].
func quotedTraversal(e hcl.Expression) hcl.Traversal {
	v, ok := literal(e)
	if !ok || v.IsNull() || v.Type() != cty.String {
		return nil
	}
	t, diags := hclsyntax.ParseTraversalAbs([]byte(v.AsString()), "", hcl.InitialPos)
	if diags.HasErrors() {
		return nil
	}
	return t
}
