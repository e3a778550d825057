package devenv

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/drone/envsubst/v2"
	"github.com/drone/envsubst/v2/parse"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TemplateVariables are the clusterctl variables a template of templates/
// uses: required ones (a bare ${NAME}) and those with a default
// (${NAME:=value}), each sorted.
func TemplateVariables(text string) (required, optional []string, err error) {
	tree, err := parse.Parse(text)
	if err != nil {
		return nil, nil, err
	}
	seen := map[string]bool{}
	var walk func(parse.Node)
	walk = func(n parse.Node) {
		switch n := n.(type) {
		case *parse.ListNode:
			for _, c := range n.Nodes {
				walk(c)
			}
		case *parse.FuncNode:
			// Only a bare reference has no value of its own.
			seen[n.Param] = seen[n.Param] || n.Name == ""
			for _, a := range n.Args {
				walk(a)
			}
		}
	}
	walk(tree.Root)
	for name, req := range seen {
		if req {
			required = append(required, name)
		} else {
			optional = append(optional, name)
		}
	}
	slices.Sort(required)
	slices.Sort(optional)
	return required, optional, nil
}

// RenderTemplate renders a clusterctl template file with vars the way
// `clusterctl generate` does (the same substitution library and syntax)
// and decodes its objects. Every required variable vars lacks is named in
// the error, and nothing is rendered.
func RenderTemplate(path string, vars map[string]string) ([]*unstructured.Unstructured, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	required, _, err := TemplateVariables(string(raw))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var missing []string
	for _, name := range required {
		if _, ok := vars[name]; !ok {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%s: the variables %s have no value: set each in the environment or in the clusterctl configuration file", path, strings.Join(missing, ", "))
	}
	text, err := envsubst.Eval(string(raw), func(name string) string { return vars[name] })
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return decodeManifests(strings.NewReader(text), path)
}
