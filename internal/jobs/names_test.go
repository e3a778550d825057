package jobs

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

func TestName(t *testing.T) {
	const long = "a-very-long-terraform-machine-name-that-does-not-fit-in-a-job"
	testCases := []struct {
		name       string
		kindShort  string
		objectName string
		op         string
		attempt    int
		hash6      string
		want       string
	}{
		{name: "short name is kept", kindShort: "c", objectName: "prod", op: "apply", attempt: 1, hash6: "965928",
			want: "captf-c-prod-apply-a1-965928"},
		{name: "pool with a high attempt", kindShort: "mp", objectName: "workers", op: "refresh", attempt: 12, hash6: "81c54a",
			want: "captf-mp-workers-refresh-a12-81c54a"},
		{name: "exactly 57 characters is kept", kindShort: "m", objectName: strings.Repeat("x", 33), op: "drift", attempt: 1, hash6: "abcdef",
			want: "captf-m-" + strings.Repeat("x", 33) + "-drift-a1-abcdef"},
		{name: "58 characters hashes the name", kindShort: "m", objectName: strings.Repeat("x", 34), op: "drift", attempt: 1, hash6: "abcdef",
			want: "captf-m-" + shortHash(strings.Repeat("x", 34)) + "-drift-a1-abcdef"},
		{name: "long object name is replaced by 16 hex of its SHA-256", kindShort: "m", objectName: long, op: "destroy", attempt: 3, hash6: "044e19",
			want: "captf-m-0a6d8fa73847fc6f-destroy-a3-044e19"},
		{name: "a dotted name is hashed to stay a DNS label", kindShort: "m", objectName: "web.example", op: "apply", attempt: 1, hash6: "965928",
			want: "captf-m-03bbe82aa48c8fa0-apply-a1-965928"},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			got := Name(tc.kindShort, tc.objectName, tc.op, tc.attempt, tc.hash6)
			if got != tc.want {
				t.Fatalf("Name = %q, want %q", got, tc.want)
			}
			if len(got) > MaxNameLength {
				t.Fatalf("Name %q has %d characters, more than %d", got, len(got), MaxNameLength)
			}
		})
	}
}

func TestHash6(t *testing.T) {
	testCases := []struct {
		name       string
		inputsHash string
		op         string
		attempt    int
		tick       string
		want       string
	}{
		{name: "apply without tick", inputsHash: "h2:abc", op: "apply", attempt: 1, want: "965928"},
		{name: "another attempt changes the hash", inputsHash: "h2:abc", op: "apply", attempt: 2, want: "edffb2"},
		{name: "refresh with its tick", inputsHash: "h2:abc", op: "refresh", attempt: 1, tick: "2026-11-29T14:00:00Z", want: "81c54a"},
		{name: "restore with its backup tick", inputsHash: "h2:abc", op: "restore", attempt: 1, tick: "restore/captf-state-backup-x-7", want: "8f3f4e"},
		{name: "destroy of a state without hash", op: "destroy", attempt: 1, want: "044e19"},
		// Without length prefixes these two would hash the same bytes.
		{name: "field boundaries matter (1)", inputsHash: "h2:a", op: "bapply", attempt: 1, want: "42d1ca"},
		{name: "field boundaries matter (2)", inputsHash: "h2:ab", op: "apply", attempt: 1, want: "ba0f45"},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Hash6(tc.inputsHash, tc.op, tc.attempt, tc.tick); got != tc.want {
				t.Fatalf("Hash6 = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestNameProperties checks, over many generated inputs, that every name
// is a DNS label of at most 57 characters, that the same inputs give the
// same name and that different inputs give different names.
func TestNameProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	kinds := []string{"c", "m", "mp"}
	ops := []string{"apply", "plan", "destroy", "refresh", "drift", "restore"}
	seen := map[string]string{}
	for range 20000 {
		kind, object, op := kinds[r.IntN(len(kinds))], objectName(r), ops[r.IntN(len(ops))]
		attempt := 1 + r.IntN(1000)
		hash := Hash6(fmt.Sprintf("h2:%x", r.Uint64()), op, attempt, "")
		name := Name(kind, object, op, attempt, hash)
		if len(name) > MaxNameLength {
			t.Fatalf("Name(%q, %q) = %q: %d characters", kind, object, name, len(name))
		}
		if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
			t.Fatalf("Name(%q, %q) = %q is not a DNS label: %v", kind, object, name, errs)
		}
		if again := Name(kind, object, op, attempt, hash); again != name {
			t.Fatalf("Name is not deterministic: %q then %q", name, again)
		}
		input := strings.Join([]string{kind, object, op, fmt.Sprint(attempt), hash}, "|")
		if prev, ok := seen[name]; ok && prev != input {
			t.Fatalf("inputs %q and %q both give %q", prev, input, name)
		}
		seen[name] = input
	}
}

// objectName returns a valid object name (a DNS subdomain) of 1 to 253
// characters, sometimes with dots, often short enough to be kept.
func objectName(r *rand.Rand) string {
	const alnum = "abcdefghijklmnopqrstuvwxyz0123456789"
	const inner = alnum + "-."
	n := 1 + r.IntN(40)
	if r.IntN(10) == 0 {
		n = 1 + r.IntN(253)
	}
	b := make([]byte, n)
	for i := range b {
		set := inner
		if i == 0 || i == n-1 || b[i-1] == '.' {
			set = alnum
		}
		b[i] = set[r.IntN(len(set))]
	}
	// A dot may not follow a dash or precede one; keep it simple.
	name := strings.NewReplacer("-.", "-a", ".-", "a-").Replace(string(b))
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return "fallback-" + fmt.Sprint(n)
	}
	return name
}

func TestPodPattern(t *testing.T) {
	long := strings.Repeat("w", 60)
	testCases := []struct {
		pod  string
		want bool
	}{
		{Name("m", "m-0", "apply", 3, "a1b2c3") + "-x7k2p", true},
		{Name("m", "m-0", "destroy", 1, "a1b2c3") + "-abcde", true},
		{Name("m", long, "apply", 1, "a1b2c3") + "-abcde", true},
		{Name("m", "m-0", "apply", 3, "a1b2c3"), false},
		{Name("m", "m-01", "apply", 3, "a1b2c3") + "-x7k2p", false},
		{Name("mp", "m-0", "apply", 3, "a1b2c3") + "-x7k2p", false},
		{"laptop", false},
	}
	for _, tc := range testCases {
		if got := PodPattern("m", "m-0").MatchString(tc.pod) || PodPattern("m", long).MatchString(tc.pod); got != tc.want {
			t.Errorf("PodPattern matches %q = %v, want %v", tc.pod, got, tc.want)
		}
	}
}
