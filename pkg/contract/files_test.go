package contract

import "testing"

func TestModuleFileSuffix(t *testing.T) {
	testCases := map[string]string{
		"main.tf": ".tf", "main.tf.json": ".tf.json", "main.tofu": ".tofu", "main.tofu.json": ".tofu.json",
		".tf": "", "x.json": "", "main.tf.bak": "", ".#main.tf": "", ".hidden.tf": "", "main.tf~": "",
		"#main.tf#": "", "#main.tf": ".tf", "README.md": "",
	}
	for name, want := range testCases {
		if got := ModuleFileSuffix(name); got != want {
			t.Errorf("ModuleFileSuffix(%q) = %q, want %q", name, got, want)
		}
	}
}
