package inputs_test

import (
	"encoding/json"
	"testing"

	"captf.io/captf/internal/inputs"
)

// TestRender: a rendering's files are the ones Files builds and its hash
// the one Hash computes; a pool that guards its exports also gets its
// approval and exports hashes, which nothing else gets.
func TestRender(t *testing.T) {
	vars := inputs.Variables{Values: map[string]json.RawMessage{"size": json.RawMessage(`2`)}, Sensitive: map[string]bool{}}
	for _, tc := range []struct {
		name          string
		in            inputs.RoleInputs
		guardsExports bool
	}{
		{"a cluster", clusterRole(), false},
		{"a pool guarding its exports", poolRole(), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, err := tc.in.Tfvars()
			if err != nil {
				t.Fatal(err)
			}
			r, err := inputs.Render(testKey, tc.in.Role(), image, data, vars, tc.guardsExports)
			if err != nil {
				t.Fatal(err)
			}
			mainTF, tfvars, err := inputs.Files(tc.in.Role(), data, vars.Values, vars.Sensitive)
			if err != nil {
				t.Fatal(err)
			}
			if string(r.MainTF) != string(mainTF) || string(r.Tfvars) != string(tfvars) {
				t.Error("the rendered files are not Files'")
			}
			if want := mustHash(t, false, tc.in, vars.Values, vars.Sensitive); r.Hash != want {
				t.Errorf("hash %s, want %s", r.Hash, want)
			}
			wantApproval, wantExports := "", ""
			if tc.guardsExports {
				wantApproval, wantExports = mustHash(t, true, tc.in, vars.Values, vars.Sensitive), inputs.ExportsHash(data)
			}
			if r.Approval != wantApproval || r.Exports != wantExports {
				t.Errorf("approval %q, exports %q; want %q, %q", r.Approval, r.Exports, wantApproval, wantExports)
			}
		})
	}
}
