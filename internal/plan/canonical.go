package plan

import (
	"bytes"

	"captf.io/captf/internal/canonjson"
)

// canonical writes v as canonical JSON (package canonjson), numbers
// exactly as the runtime wrote them, so that equal values always give
// equal bytes.
//
// v is a decoded plan value (map[string]any, []any, string, json.Number,
// bool, nil) or a value this package built from them (int path steps,
// []string). Anything else is unreachable; canonjson writes a distinct
// token for it, which keeps the output deterministic.
func canonical(buf *bytes.Buffer, v any) {
	_ = canonjson.Write(buf, v, canonjson.Verbatim)
}
