package modulecheck

import (
	"captf.io/captf/internal/lint"
	"captf.io/captf/pkg/contract"
)

// Options say what the module is checked as.
type Options struct {
	// Role is the contract role the module plays.
	Role contract.Role
}

// Result is what Check found.
type Result struct {
	// Findings of the module checks.
	Findings []lint.Finding
	// Providers are the source addresses of the providers the module and
	// its local submodules require, as written ("hashicorp/null" or
	// "registry.opentofu.org/hashicorp/null"), sorted and unique; the
	// built-in terraform provider is left out.
	Providers []string
	// Variables are the names of the root module's variables, sorted.
	Variables []string
}

// Check reads the module in dir and checks it. A module that cannot be
// read or parsed returns an error made by lint.Unreadable that names the
// file.
func Check(dir string, opts Options) (Result, error) {
	l, root, err := load(dir)
	if err != nil {
		return Result{}, lint.Unreadable("%v", err)
	}
	if err := l.checkInputs(root, opts.Role); err != nil {
		return Result{}, err
	}
	if err := l.checkOutputs(root, opts.Role); err != nil {
		return Result{}, err
	}
	if err := l.checkModules(root, opts.Role); err != nil {
		return Result{}, lint.Unreadable("%v", err)
	}
	return Result{Findings: l.findings, Providers: l.providers(), Variables: sortedKeys(root.variables)}, nil
}
