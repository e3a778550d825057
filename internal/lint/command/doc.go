// Package command owns the command line of tfcapi-lint: its subcommands
// (module, image, version), flags, output and exit codes, as the
// module-author guide documents them. cmd/tfcapi-lint only calls Run.
package command
