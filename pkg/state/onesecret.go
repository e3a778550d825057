package state

import "fmt"

// OneSecretMargin is how far below ChunkSize a state must stay to be
// handed to a runtime that keeps it in one Secret (OpenTofu, Terraform
// before 1.6): an apply grows the state, and such a runtime cannot store
// one past ChunkSize.
const OneSecretMargin = 256 << 10

// FitsOneSecret reports whether a state of bytes compressed, stored in
// pieces Secrets, can be handed to a runtime that keeps it in one Secret:
// one piece at most, and the margin below ChunkSize.
func FitsOneSecret(bytes int64, pieces int) bool {
	return pieces <= 1 && bytes < ChunkSize-OneSecretMargin
}

// OneSecretRefusal says why the image img, whose runtime keeps the state
// in one Secret, cannot take a state of bytes in pieces Secrets, and the
// way forward.
func OneSecretRefusal(img string, bytes int64, pieces int) string {
	split := ""
	if pieces > 1 {
		split = fmt.Sprintf(", split by Terraform across %d Secrets, which OpenTofu would read truncated", pieces)
	}
	return fmt.Sprintf("image %s runs OpenTofu (label io.captf.runtime=tofu), which keeps the state in one Secret of at most 1 MiB compressed; "+
		"this object's state is %.2f MiB compressed%s. Keep a Terraform image; to move to OpenTofu, first shrink the state below %d KiB "+
		"with a Terraform image (which deletes its -part-N Secrets), then change the image (see the size-limits runbook)",
		img, float64(bytes)/(1<<20), split, (ChunkSize-OneSecretMargin)>>10)
}
