// Package runner owns what the runner binary does inside a CAPTF Job: the
// image layout check, the generated root, the environment rewrite, the CLI
// configuration for a provider mirror, the steps and their order, the
// failure summary, signal handling and the result document written to the
// pod's termination message.
//
// The package is built from small pure pieces that cmd/runner wires
// together. So far it holds:
//
//   - env.go: the environment every runtime child sees (RewriteEnv);
//   - cliconfig.go: the provider_installation block for an image's
//     filesystem mirror (CLIConfig, WriteCLIConfig);
//   - summary.go, ansi.go, redact.go, tail.go: the curated failure summary of
//     a failed step, with known secret values redacted (Summary, Redactor,
//     TailBuffer);
//   - result.go, fit.go: the result document and its degradation to the
//     4096 bytes of a termination message (Result, Marshal, WriteResult);
//   - exit.go: the runner's process exit codes.
//
// The runner is a small static binary: this package uses the standard
// library only and must never import controller-runtime.
package runner
