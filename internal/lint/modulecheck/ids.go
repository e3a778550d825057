package modulecheck

import "captf.io/captf/internal/lint"

// The module checks of the documented check table, by ID.
const (
	idInputRequired       = "input/required"
	idInputType           = "input/type"
	idInputDefault        = "input/default"
	idInputSensitive      = "input/sensitive"
	idInputReserved       = "input/reserved"
	idTagsDeclared        = "input/tags-declared"
	idTagsUnused          = "input/tags-unused"
	idUserVariableDefault = "input/user-variable-default"
	idOutputRequired      = "output/required"
	idOutputHealth        = "output/health"
	idOutputReserved      = "output/reserved"
	idEndpointNeverSet    = "output/endpoint-never-set"
	idProviderIDList      = "output/provider-id-list-shape"
	idPoolIgnoreChanges   = "pool/autoscaling-ignore-changes"
	idBackend             = "module/backend"
	idCloud               = "module/cloud"
	idProviderConfig      = "module/provider-config"
	idSourceEscape        = "module/source-escape"
	idTofuShadow          = "module/tofu-shadow"
	idVersion             = "module/version"
)

// severities of the checks; a check reporting at two levels
// (input/type, output/provider-id-list-shape) says so where it reports.
var severities = map[string]lint.Severity{
	idInputRequired:       lint.Error,
	idInputType:           lint.Error,
	idInputDefault:        lint.Warning,
	idInputSensitive:      lint.Warning,
	idInputReserved:       lint.Error,
	idTagsDeclared:        lint.Error,
	idTagsUnused:          lint.Warning,
	idUserVariableDefault: lint.Warning,
	idOutputRequired:      lint.Error,
	idOutputHealth:        lint.Error,
	idOutputReserved:      lint.Warning,
	idEndpointNeverSet:    lint.Warning,
	idProviderIDList:      lint.Error,
	idPoolIgnoreChanges:   lint.Warning,
	idBackend:             lint.Error,
	idCloud:               lint.Error,
	idProviderConfig:      lint.Warning,
	idSourceEscape:        lint.Error,
	idTofuShadow:          lint.Warning,
	idVersion:             lint.Info,
}

// add reports a finding at the check's severity.
func (l *loader) add(id, file string, line int, msg string) {
	l.addAt(id, severities[id], file, line, msg)
}

// addAt reports a finding at a given severity.
func (l *loader) addAt(id string, sev lint.Severity, file string, line int, msg string) {
	if file == "" {
		file = lint.Whole
	}
	l.findings = append(l.findings, lint.Finding{ID: id, Severity: sev, File: file, Line: line, Message: msg})
}
