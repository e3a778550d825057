package plan

import (
	"fmt"
	"strings"
	"testing"
)

// testKey is a valid 32-byte plan key.
var testKey = []byte("0123456789abcdef0123456789abcdef")

// changeObj renders a "change" object: actions is comma-separated
// ("delete,create"), extra holds more members (without a leading comma).
func changeObj(actions, extra string) string {
	quoted := make([]string, 0, 2)
	for _, a := range strings.Split(actions, ",") {
		quoted = append(quoted, fmt.Sprintf("%q", a))
	}
	c := `{"actions":[` + strings.Join(quoted, ",") + `]`
	if extra != "" {
		c += "," + extra
	}
	return c + "}"
}

// res renders one resource_changes entry; top holds extra members of the
// entry itself (previous_address, deposed).
func res(address, actions, change, top string) string {
	e := fmt.Sprintf(`{"address":%q,"mode":"managed","type":"null_resource","name":"x","change":%s`,
		address, changeObj(actions, change))
	if top != "" {
		e += "," + top
	}
	return e + "}"
}

// doc renders a plan document from resource entries and output members
// (name -> rendered change object).
func doc(resources []string, outputs map[string]string) []byte {
	var b strings.Builder
	b.WriteString(`{"format_version":"1.2","terraform_version":"1.8.5","resource_changes":[`)
	b.WriteString(strings.Join(resources, ","))
	b.WriteString(`],"output_changes":{`)
	first := true
	for name, c := range outputs {
		if !first {
			b.WriteString(",")
		}
		first = false
		fmt.Fprintf(&b, "%q:%s", name, c)
	}
	b.WriteString(`},"errored":false}`)
	return []byte(b.String())
}

func mustParse(t *testing.T, planJSON []byte) *Plan {
	t.Helper()
	p, err := Parse(planJSON)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return p
}

func mustFingerprint(t *testing.T, planJSON, key []byte) string {
	t.Helper()
	h, err := Fingerprint(planJSON, key)
	if err != nil {
		t.Fatalf("Fingerprint: %v", err)
	}
	return h
}
