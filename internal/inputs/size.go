package inputs

import "fmt"

// MaxBytes caps a run's inputs: main.tf.json and terraform.tfvars.json
// together, user variables and bootstrap data included.
const MaxBytes = 1_000_000

// Size is the size the cap applies to.
func Size(mainTF, tfvars []byte) int {
	return len(mainTF) + len(tfvars)
}

// TooLargeError reports inputs over MaxBytes. The caller starts no Job and
// reports InputsTooLarge.
type TooLargeError struct {
	// Bytes is the inputs' size.
	Bytes int
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("the rendered inputs are %d bytes, over the %d-byte limit: pass less through variables, exports or bootstrap data", e.Bytes, MaxBytes)
}

// CheckSize returns a *TooLargeError when the inputs exceed MaxBytes;
// exactly MaxBytes is allowed.
func CheckSize(mainTF, tfvars []byte) error {
	if n := Size(mainTF, tfvars); n > MaxBytes {
		return &TooLargeError{Bytes: n}
	}
	return nil
}
