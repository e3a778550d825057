package plan

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSummaryCountsAndLabels(t *testing.T) {
	testCases := []struct {
		name      string
		resources []string
		outputs   map[string]string
		want      Summary
	}{
		{
			name:      "create",
			resources: []string{res("null_resource.a", "create", `"before":null,"after":{"triggers":{"x":"1"}}`, "")},
			want:      Summary{Create: 1, Resources: []string{"null_resource.a (create)"}},
		},
		{
			name:      "update",
			resources: []string{res("null_resource.a", "update", `"before":{"v":"1"},"after":{"v":"2"}`, "")},
			want:      Summary{Update: 1, Resources: []string{"null_resource.a (update)"}},
		},
		{
			name:      "replace delete then create counts once, in replace",
			resources: []string{res("null_resource.a", "delete,create", "", "")},
			want:      Summary{Replace: 1, Resources: []string{"null_resource.a (replace)"}},
		},
		{
			name:      "replace create then delete counts once, in replace",
			resources: []string{res("null_resource.a", "create,delete", "", "")},
			want:      Summary{Replace: 1, Resources: []string{"null_resource.a (replace)"}},
		},
		{
			name:      "replace by forget then create",
			resources: []string{res("null_resource.a", "forget,create", "", "")},
			want:      Summary{Replace: 1, Resources: []string{"null_resource.a (replace)"}},
		},
		{
			name:      "delete",
			resources: []string{res("null_resource.a", "delete", "", "")},
			want:      Summary{Delete: 1, Resources: []string{"null_resource.a (delete)"}},
		},
		{
			name:      "forget has its own counter",
			resources: []string{res("null_resource.a", "forget", "", "")},
			want:      Summary{Forget: 1, Resources: []string{"null_resource.a (forget)"}},
		},
		{
			name:      "read is listed but not counted",
			resources: []string{res("data.http.a", "read", "", "")},
			want:      Summary{Resources: []string{"data.http.a (read)"}},
		},
		{
			name:      "no-op is not listed",
			resources: []string{res("null_resource.a", "no-op", "", "")},
			want:      Summary{},
		},
		{
			name:      "no-op import only",
			resources: []string{res("null_resource.a", "no-op", `"importing":{"id":"i-1"}`, "")},
			want:      Summary{Import: 1, Resources: []string{"null_resource.a (import)"}},
		},
		{
			name:      "no-op move only",
			resources: []string{res("null_resource.b", "no-op", "", `"previous_address":"null_resource.a"`)},
			want:      Summary{Move: 1, Resources: []string{"null_resource.b (move)"}},
		},
		{
			name: "update with import and move: labels in order, each counter once",
			resources: []string{res("aws_instance.b", "update", `"importing":{"id":"i-1"}`,
				`"previous_address":"aws_instance.a"`)},
			want: Summary{Update: 1, Import: 1, Move: 1, Resources: []string{"aws_instance.b (update, import, move)"}},
		},
		{
			name:      "delete of a moved resource",
			resources: []string{res("null_resource.b", "delete", "", `"previous_address":"null_resource.a"`)},
			want:      Summary{Delete: 1, Move: 1, Resources: []string{"null_resource.b (delete, move)"}},
		},
		{
			name:      "previous address equal to the address is not a move",
			resources: []string{res("null_resource.a", "no-op", "", `"previous_address":"null_resource.a"`)},
			want:      Summary{},
		},
		{
			name: "outputs: every action but no-op counts",
			outputs: map[string]string{
				"a": changeObj("create", `"after":"x"`),
				"b": changeObj("update", `"before":"x","after":"y"`),
				"c": changeObj("delete", `"before":"x"`),
				"d": changeObj("no-op", `"before":"x","after":"x"`),
			},
			want: Summary{OutputChanges: 3},
		},
		{
			name: "a current and a deposed object of one address",
			resources: []string{
				res("null_resource.a", "delete", "", `"deposed":"00000001"`),
				res("null_resource.a", "create,delete", "", ""),
			},
			want: Summary{Replace: 1, Delete: 1, Resources: []string{"null_resource.a (delete)", "null_resource.a (replace)"}},
		},
		{
			name: "sorted by address",
			resources: []string{
				res("null_resource.b", "create", "", ""),
				res("module.m.null_resource.a", "delete", "", ""),
				res("null_resource.a[\"k\"]", "update", "", ""),
				res("null_resource.a", "create", "", ""),
			},
			want: Summary{Create: 2, Update: 1, Delete: 1, Resources: []string{
				"module.m.null_resource.a (delete)",
				"null_resource.a (create)",
				"null_resource.a[\"k\"] (update)",
				"null_resource.b (create)",
			}},
		},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Summarize(doc(tc.resources, tc.outputs))
			if err != nil {
				t.Fatalf("Summarize: %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Summary = %+v\nwant      %+v", got, tc.want)
			}
		})
	}
}

func TestSummaryTruncation(t *testing.T) {
	testCases := []struct {
		name          string
		n             int
		wantEntries   int
		wantTruncated bool
	}{
		{name: "50 resources fit", n: 50, wantEntries: 50},
		{name: "51 resources are cut at 50", n: 51, wantEntries: 50, wantTruncated: true},
		{name: "200 resources are cut at 50", n: 200, wantEntries: 50, wantTruncated: true},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			var resources []string
			// Reverse order, so that truncation must happen after sorting.
			for i := tc.n - 1; i >= 0; i-- {
				resources = append(resources, res(fmt.Sprintf("null_resource.r%03d", i), "create", "", ""))
			}
			got, err := Summarize(doc(resources, nil))
			if err != nil {
				t.Fatalf("Summarize: %v", err)
			}
			if got.Create != tc.n {
				t.Errorf("Create = %d, want %d (counts are never truncated)", got.Create, tc.n)
			}
			if len(got.Resources) != tc.wantEntries || got.Truncated != tc.wantTruncated {
				t.Errorf("got %d entries, truncated=%v; want %d, %v", len(got.Resources), got.Truncated, tc.wantEntries, tc.wantTruncated)
			}
			if got.Resources[0] != "null_resource.r000 (create)" || got.Resources[len(got.Resources)-1] != "null_resource.r049 (create)" {
				t.Errorf("want the first 50 addresses in order, got %q ... %q", got.Resources[0], got.Resources[len(got.Resources)-1])
			}
		})
	}
}

func TestSummaryLongAddress(t *testing.T) {
	testCases := []struct {
		name    string
		address string
		actions string
		top     string
		labels  string
	}{
		{name: "ascii", address: "null_resource.a[\"" + strings.Repeat("k", 1000) + "\"]", actions: "create", labels: " (create)"},
		{name: "multi-byte key", address: "null_resource.a[\"" + strings.Repeat("é", 700) + "\"]", actions: "update", top: `"previous_address":"null_resource.b"`, labels: " (update, move)"},
		{name: "exactly 600", address: strings.Repeat("a", 600-len(" (delete)")), actions: "delete", labels: " (delete)"},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Summarize(doc([]string{res(tc.address, tc.actions, "", tc.top)}, nil))
			if err != nil {
				t.Fatalf("Summarize: %v", err)
			}
			e := got.Resources[0]
			if len(e) > MaxResourceEntryLen || !utf8.ValidString(e) {
				t.Fatalf("entry is %d bytes (valid UTF-8: %v), want <= %d", len(e), utf8.ValidString(e), MaxResourceEntryLen)
			}
			if !strings.HasSuffix(e, tc.labels) {
				t.Errorf("entry %q lost its labels %q", e[len(e)-40:], tc.labels)
			}
			cut := len(tc.address)+len(tc.labels) > MaxResourceEntryLen
			if cut != strings.HasSuffix(e, "..."+tc.labels) {
				t.Errorf("entry cut marker = %v, want %v", !cut, cut)
			}
			if !cut && e != tc.address+tc.labels {
				t.Errorf("entry = %q, want it unchanged", e)
			}
		})
	}
}

func TestSummaryEmpty(t *testing.T) {
	testCases := []struct {
		name      string
		resources []string
		outputs   map[string]string
		want      bool
	}{
		{name: "no changes at all", want: true},
		{name: "only no-op resources and outputs", want: true,
			resources: []string{res("null_resource.a", "no-op", `"before":{"a":"1"},"after":{"a":"1"}`, "")},
			outputs:   map[string]string{"o": changeObj("no-op", `"before":"x","after":"x"`)}},
		{name: "an output change", outputs: map[string]string{"o": changeObj("update", `"before":"x","after":"y"`)}},
		{name: "an import only", resources: []string{res("null_resource.a", "no-op", `"importing":{"id":"1"}`, "")}},
		{name: "a move only", resources: []string{res("null_resource.a", "no-op", "", `"previous_address":"null_resource.b"`)}},
		{name: "a read", resources: []string{res("data.x.a", "read", "", "")}},
		{name: "a forget", resources: []string{res("null_resource.a", "forget", "", "")}},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			planJSON := doc(tc.resources, tc.outputs)
			s, err := Summarize(planJSON)
			if err != nil {
				t.Fatalf("Summarize: %v", err)
			}
			if s.Empty() != tc.want {
				t.Errorf("Empty() = %v, want %v", s.Empty(), tc.want)
			}
			// Empty and the empty-plan hash always agree.
			if h := mustFingerprint(t, planJSON, testKey); (h == EmptyPlanHash) != tc.want {
				t.Errorf("Fingerprint = %s; equal to EmptyPlanHash must be %v", h, tc.want)
			}
		})
	}
}

func TestDrift(t *testing.T) {
	t.Run("counts by action, imports moves reads forgets and outputs are not drift", func(t *testing.T) {
		p := mustParse(t, doc([]string{
			res("null_resource.u", "update", "", ""),
			res("null_resource.c", "create", "", ""),
			res("null_resource.r", "create,delete", "", ""),
			res("null_resource.d", "delete", "", ""),
			res("null_resource.i", "no-op", `"importing":{"id":"x"}`, ""),
			res("null_resource.m", "no-op", "", `"previous_address":"null_resource.old"`),
			res("data.x.y", "read", "", ""),
			res("null_resource.f", "forget", "", ""),
		}, map[string]string{"o": changeObj("update", `"before":"a","after":"b"`)}))
		want := Drift{Detected: true, Create: 1, Update: 1, Replace: 1, Delete: 1,
			Resources: []string{"null_resource.c", "null_resource.d", "null_resource.r", "null_resource.u"}}
		if got := p.Drift(); !reflect.DeepEqual(got, want) {
			t.Errorf("Drift = %+v, want %+v", got, want)
		}
	})
	t.Run("no drift", func(t *testing.T) {
		p := mustParse(t, doc([]string{res("null_resource.i", "no-op", `"importing":{"id":"x"}`, "")},
			map[string]string{"o": changeObj("create", `"after":"b"`)}))
		if got := p.Drift(); !reflect.DeepEqual(got, Drift{}) {
			t.Errorf("Drift = %+v, want nothing detected", got)
		}
	})
	t.Run("at most 20 addresses, counts complete", func(t *testing.T) {
		var resources []string
		for i := 0; i < 30; i++ {
			resources = append(resources, res(fmt.Sprintf("null_resource.r%02d", i), "update", "", ""))
		}
		d := mustParse(t, doc(resources, nil)).Drift()
		if d.Update != 30 || len(d.Resources) != MaxDriftResources || d.Resources[19] != "null_resource.r19" {
			t.Errorf("Drift = %d updates, %d addresses (last %q); want 30, 20, null_resource.r19",
				d.Update, len(d.Resources), d.Resources[len(d.Resources)-1])
		}
	})
}

func TestDestructive(t *testing.T) {
	testCases := []struct {
		name      string
		resources []string
		outputs   map[string]string
		want      bool
	}{
		{name: "empty plan"},
		{name: "create and update", resources: []string{res("a.a", "create", "", ""), res("a.b", "update", "", "")}},
		{name: "plain delete", want: true, resources: []string{res("a.a", "create", "", ""), res("a.b", "delete", "", "")}},
		{name: "replace delete then create", want: true, resources: []string{res("a.a", "delete,create", "", "")}},
		{name: "replace create then delete", want: true, resources: []string{res("a.a", "create,delete", "", "")}},
		{name: "forget", resources: []string{res("a.a", "forget", "", "")}},
		{name: "forget then create", resources: []string{res("a.a", "forget,create", "", "")}},
		{name: "import", resources: []string{res("a.a", "no-op", `"importing":{"id":"1"}`, "")}},
		{name: "move", resources: []string{res("a.a", "no-op", "", `"previous_address":"a.b"`)}},
		{name: "read", resources: []string{res("data.a.a", "read", "", "")}},
		{name: "output removed", outputs: map[string]string{"o": changeObj("delete", `"before":"x"`)}},
		{name: "delete of a deposed object", want: true, resources: []string{res("a.a", "delete", "", `"deposed":"0001"`)}},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			if got := mustParse(t, doc(tc.resources, tc.outputs)).Destructive(); got != tc.want {
				t.Errorf("Destructive() = %v, want %v", got, tc.want)
			}
		})
	}
}
