package webhooks

import (
	"context"
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"captf.io/captf/internal/imagemeta"
	"captf.io/captf/pkg/state"
)

// Moving an object to an OpenTofu image is refused once its state no
// longer fits one Secret; another runtime, an unreadable image or a small
// state pass (with a warning where nothing could be checked).
func TestRuntimeSwitch(t *testing.T) {
	asked := 0
	images := imagemeta.Func(func(_ context.Context, ref string) (map[string]string, error) {
		asked++
		switch ref {
		case "reg/m:tofu":
			return map[string]string{imagemeta.LabelRuntime: imagemeta.RuntimeTofu}, nil
		case "reg/m:terraform":
			return map[string]string{imagemeta.LabelRuntime: imagemeta.RuntimeTerraform}, nil
		case "reg/m:bare":
			return nil, nil
		}
		return nil, errors.New("registry unreachable")
	})
	path := field.NewPath("spec", "source", "image")
	big := int64(state.ChunkSize + state.ChunkSize/2)
	cases := []struct {
		name       string
		image      string
		bytes      int64
		refused    string
		warning    string
		wantAsking bool
	}{
		{name: "a split state to OpenTofu", image: "reg/m:tofu", bytes: big, refused: "1.50 MiB compressed, split by Terraform across 2 Secrets", wantAsking: true},
		{name: "a state near the limit to OpenTofu", image: "reg/m:tofu", bytes: state.ChunkSize - state.OneSecretMargin, refused: "below 768 KiB", wantAsking: true},
		{name: "a split state to another Terraform image", image: "reg/m:terraform", bytes: big, wantAsking: true},
		{name: "an image without labels", image: "reg/m:bare", bytes: big, warning: "has no io.captf.runtime label", wantAsking: true},
		{name: "an unreadable image", image: "reg/m:gone", bytes: big, warning: "could not read the labels", wantAsking: true},
		{name: "a small state asks nothing", image: "reg/m:tofu", bytes: state.ChunkSize/2 - 1},
		{name: "the same image asks nothing", image: "reg/m:old", bytes: big},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			asked = 0
			warnings, refused := runtimeSwitch(t.Context(), imageCheck{images: images}, "reg/m:old", tc.image, tc.bytes, path)
			switch {
			case tc.refused == "" && refused != nil:
				t.Errorf("refused: %v", refused)
			case tc.refused != "" && (refused == nil || !strings.Contains(refused.Error(), tc.refused) || refused.Field != "spec.source.image"):
				t.Errorf("refusal %v, want one on spec.source.image naming %q", refused, tc.refused)
			}
			if got := strings.Join(warnings, "; "); (tc.warning == "") != (got == "") || !strings.Contains(got, tc.warning) {
				t.Errorf("warnings %q, want %q", got, tc.warning)
			}
			if (asked > 0) != tc.wantAsking {
				t.Errorf("asked the registry %d times", asked)
			}
		})
	}
}
