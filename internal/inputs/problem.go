package inputs

import (
	"errors"

	"captf.io/captf/internal/conditions"
)

// Problem says whether err, from building an object's inputs, is a
// problem of its configuration that DependenciesReady tells (and which
// one), rather than a failure of the pass: a variables source not found,
// a variable that is not valid, a number with no canonical form (in the
// cluster's exports: the machines and pools wait for fixed ones), or
// bootstrap data of no known format (they wait for it).
func Problem(err error) (conditions.InputsProblem, bool) {
	var notFound *SourceNotFoundError
	var invalid *InvalidVariableError
	var number *NumberError
	switch {
	case errors.As(err, &notFound):
		return conditions.SourceNotFound, true
	case errors.As(err, &invalid):
		return conditions.VariablesInvalid, true
	case errors.As(err, &number) && number.FromExports():
		return conditions.WaitingForExports, true
	case errors.As(err, &number):
		return conditions.VariablesInvalid, true
	case errors.Is(err, ErrBootstrapFormat):
		return conditions.WaitingForBootstrap, true
	}
	return 0, false
}
