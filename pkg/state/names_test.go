package state

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/labels"
)

func TestSuffix(t *testing.T) {
	rule := func(ns, kind, name, short string) string {
		sum := sha256.Sum256([]byte(ns + "/" + kind + "/" + name))
		return hex.EncodeToString(sum[:])[:16] + "-" + short
	}
	testCases := []struct {
		name, namespace, kind, object string
		want                          string
		wantErr                       bool
	}{
		// Checked by hand: printf 'default/TerraformMachine/m1' | sha256sum
		{name: "fixed example", namespace: "default", kind: "TerraformMachine", object: "m1", want: "a95053d99895906c-m"},
		{name: "cluster", namespace: "team-a", kind: "TerraformCluster", object: "prod", want: rule("team-a", "TerraformCluster", "prod", "c")},
		{name: "machine", namespace: "team-a", kind: "TerraformMachine", object: "prod-md-0-x7k2p", want: rule("team-a", "TerraformMachine", "prod-md-0-x7k2p", "m")},
		{name: "machine pool", namespace: "team-a", kind: "TerraformMachinePool", object: "pool", want: rule("team-a", "TerraformMachinePool", "pool", "mp")},
		{name: "name ending in digits", namespace: "ns", kind: "TerraformMachine", object: "node-12", want: rule("ns", "TerraformMachine", "node-12", "m")},
		{name: "unknown kind", namespace: "ns", kind: "TerraformMachineTemplate", object: "x", wantErr: true},
		{name: "kind in lower case", namespace: "ns", kind: "terraformmachine", object: "x", wantErr: true},
		{name: "no name", namespace: "ns", kind: "TerraformMachine", wantErr: true},
		{name: "no namespace", kind: "TerraformMachine", object: "x", wantErr: true},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Suffix(tc.namespace, tc.kind, tc.object)
			if (err != nil) != tc.wantErr {
				t.Fatalf("Suffix() error = %v, want error %v", err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("Suffix() = %q, want %q", got, tc.want)
			}
			if err == nil && regexp.MustCompile(`-[0-9]+$`).MatchString(got) {
				t.Errorf("suffix %q ends in -<digits>; chunks could not be told apart", got)
			}
		})
	}
}

func TestNames(t *testing.T) {
	const suffix = "a95053d99895906c-m"
	testCases := []struct{ name, got, want string }{
		{"base Secret", SecretName(suffix), "tfstate-default-a95053d99895906c-m"},
		{"chunk 0 is the base", ChunkName(suffix, 0), "tfstate-default-a95053d99895906c-m"},
		{"first part", ChunkName(suffix, 1), "tfstate-default-a95053d99895906c-m-part-1"},
		{"twelfth part", ChunkName(suffix, 12), "tfstate-default-a95053d99895906c-m-part-12"},
		{"lock Lease", LockLeaseName(suffix), "lock-tfstate-default-a95053d99895906c-m"},
		{"selector", Selector(suffix).String(), "tfstate=true,tfstateSecretSuffix=a95053d99895906c-m,tfstateWorkspace=default"},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Errorf("got %q, want %q", tc.got, tc.want)
			}
		})
	}
}

func TestOwnerLabels(t *testing.T) {
	long := strings.Repeat("a", 64)
	sum := sha256.Sum256([]byte(long))
	hashed := hex.EncodeToString(sum[:])[:16]
	edge := strings.Repeat("b", 63)
	testCases := []struct {
		name, kind, object, cluster string
		wantName, wantCluster       string
	}{
		{name: "short names kept", kind: "TerraformMachine", object: "m1", cluster: "prod", wantName: "m1", wantCluster: "prod"},
		{name: "63 characters kept", kind: "TerraformCluster", object: edge, cluster: edge, wantName: edge, wantCluster: edge},
		{name: "64 characters hashed", kind: "TerraformMachinePool", object: long, cluster: long, wantName: hashed, wantCluster: hashed},
		{name: "only the long one hashed", kind: "TerraformMachine", object: "m1", cluster: long, wantName: "m1", wantCluster: hashed},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			got := OwnerLabels(tc.kind, tc.object, tc.cluster)
			want := map[string]string{
				"captf.infrastructure.cluster.x-k8s.io/owner-kind": tc.kind,
				"captf.infrastructure.cluster.x-k8s.io/owner-name": tc.wantName,
				"cluster.x-k8s.io/cluster-name":                    tc.wantCluster,
				"captf.io/managed":                                 "true",
				"clusterctl.cluster.x-k8s.io/move":                 "",
			}
			if len(got) != len(want) {
				t.Errorf("OwnerLabels() has %d labels, want %d: %v", len(got), len(want), got)
			}
			for k, v := range want {
				if g, ok := got[k]; !ok || g != v {
					t.Errorf("label %s = %q (present %v), want %q", k, g, ok, v)
				}
			}
		})
	}
}

// TestOwnerSelector: the selector of an object's labelled objects matches
// the labels OwnerLabels gives them, whatever the cluster, long names
// included.
func TestOwnerSelector(t *testing.T) {
	for _, name := range []string{"m-0", strings.Repeat("a", 64)} {
		sel := labels.SelectorFromSet(OwnerSelector(KindMachine, name))
		if !sel.Matches(labels.Set(OwnerLabels(KindMachine, name, "prod"))) {
			t.Errorf("OwnerSelector(%q) does not match its owner labels", name)
		}
		if sel.Matches(labels.Set(OwnerLabels(KindMachinePool, name, "prod"))) || sel.Matches(labels.Set(OwnerLabels(KindMachine, name+"x", "prod"))) {
			t.Errorf("OwnerSelector(%q) matches another owner's labels", name)
		}
	}
}

func TestHCLMap(t *testing.T) {
	testCases := []struct {
		name string
		in   map[string]string
		want string
	}{
		{name: "empty", in: map[string]string{}, want: `{}`},
		{name: "keys sorted", in: map[string]string{"b": "2", "a": "1", "c/d.e": ""}, want: `{"a"="1","b"="2","c/d.e"=""}`},
		{name: "quote and backslash escaped", in: map[string]string{"k": `say "hi" \o/`}, want: `{"k"="say \"hi\" \\o/"}`},
		{name: "control characters escaped", in: map[string]string{"k": "a\nb\tc\x01"}, want: `{"k"="a\nb\tc\u0001"}`},
		{name: "template sequences escaped", in: map[string]string{"k": "${x} %{y} $ % $$"}, want: `{"k"="$${x} %%{y} $ % $$"}`},
		{
			name: "owner labels",
			in:   OwnerLabels("TerraformMachine", "m1", "prod"),
			want: `{"captf.infrastructure.cluster.x-k8s.io/owner-kind"="TerraformMachine",` +
				`"captf.infrastructure.cluster.x-k8s.io/owner-name"="m1","captf.io/managed"="true",` +
				`"cluster.x-k8s.io/cluster-name"="prod","clusterctl.cluster.x-k8s.io/move"=""}`,
		},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			for range 3 { // map order must not leak into the argument
				if got := HCLMap(tc.in); got != tc.want {
					t.Fatalf("HCLMap() = %s, want %s", got, tc.want)
				}
			}
		})
	}
}
