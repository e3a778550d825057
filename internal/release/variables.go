package release

import (
	"slices"
	"strings"

	"github.com/drone/envsubst/v2/parse"
)

// Variables are the clusterctl variables a template uses, parsed with the
// substitution library clusterctl uses: the required ones (a bare
// ${NAME}), sorted, and the default of each optional one
// (${NAME:=default}).
func Variables(text string) (required []string, defaults map[string]string, err error) {
	tree, err := parse.Parse(text)
	if err != nil {
		return nil, nil, err
	}
	bare := map[string]bool{}
	defaults = map[string]string{}
	var walk func(parse.Node)
	walk = func(n parse.Node) {
		switch n := n.(type) {
		case *parse.ListNode:
			for _, c := range n.Nodes {
				walk(c)
			}
		case *parse.FuncNode:
			if n.Name == "" {
				bare[n.Param] = true
			} else {
				var value strings.Builder
				for _, a := range n.Args {
					if t, ok := a.(*parse.TextNode); ok {
						value.WriteString(t.Value)
					}
				}
				defaults[n.Param] = value.String()
			}
			for _, a := range n.Args {
				walk(a)
			}
		}
	}
	walk(tree.Root)
	for name := range bare {
		delete(defaults, name) // required wherever it is used bare
		required = append(required, name)
	}
	slices.Sort(required)
	return required, defaults, nil
}
