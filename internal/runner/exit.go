package runner

// Process exit codes of the runner. A failing step's own exit code is never
// propagated: Terraform's 2 never becomes the runner's 2.
const (
	// ExitOK: every step succeeded, or an apply's plan had no changes.
	ExitOK = 0
	// ExitFailure: a step failed, the run was interrupted, blocked or its
	// plan changed, preparation failed, or the result could not be written.
	ExitFailure = 1
	// ExitUsage: unknown operation, bad flag or unexpected argument.
	ExitUsage = 2
)
