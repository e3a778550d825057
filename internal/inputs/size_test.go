package inputs_test

import (
	"bytes"
	"errors"
	"testing"

	"captf.io/captf/internal/inputs"
	"captf.io/captf/pkg/contract"
)

func TestSizeCap(t *testing.T) {
	mainTF, err := inputs.Root(contract.RoleMachinePool, nil)
	if err != nil {
		t.Fatal(err)
	}
	testCases := []struct {
		name     string
		tfvars   int
		tooLarge bool
	}{
		{"well under", 1000, false},
		{"exactly the cap", inputs.MaxBytes - len(mainTF), false},
		{"one byte over", inputs.MaxBytes - len(mainTF) + 1, true},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			tfvars := bytes.Repeat([]byte("x"), tc.tfvars)
			if got := inputs.Size(mainTF, tfvars); got != len(mainTF)+tc.tfvars {
				t.Errorf("Size = %d", got)
			}
			err := inputs.CheckSize(mainTF, tfvars)
			var tl *inputs.TooLargeError
			if errors.As(err, &tl) != tc.tooLarge {
				t.Fatalf("error %v, too large %v", err, tc.tooLarge)
			}
			if tc.tooLarge && tl.Bytes != inputs.MaxBytes+1 {
				t.Errorf("reported %d bytes", tl.Bytes)
			}
		})
	}
}

// A pool whose bootstrap data fills the cap: the rendered files are over
// it, and the contract still holds for what was rendered.
func TestSizeCapOnRenderedInputs(t *testing.T) {
	r := poolRole()
	r.Bootstrap.Value = bytes.Repeat([]byte{0x1f, 0x8b}, 400_000) // 1,066,668 base64 bytes
	tfvars, err := r.Tfvars()
	if err != nil {
		t.Fatal(err)
	}
	validate(t, r, tfvars)
	mainTF, tfvars, err := inputs.Files(r.Role(), tfvars, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var tl *inputs.TooLargeError
	if err := inputs.CheckSize(mainTF, tfvars); !errors.As(err, &tl) || tl.Bytes != len(mainTF)+len(tfvars) {
		t.Errorf("error %v", err)
	}
}
