package records_test

import (
	"maps"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/records"
)

var owner = metav1.OwnerReference{APIVersion: infrav1.GroupVersion.String(), Kind: "TerraformMachine", Name: "web-0", UID: "uid-1"}

func fullRecord() records.Record {
	return records.Record{
		Name: "ignored", Job: "captf-m-web-0-apply-a1-abcdef", Image: "registry.example/m:v1", ImageDigest: "sha256:0123",
		Identity: "creds", IdentityKind: infrav1.IdentityKindSecret, InputsHash: "h2:aa",
		MainTF: []byte(`{"main":1}`), Tfvars: []byte(`{"bootstrap_data":"c2VjcmV0"}`), MayHaveApplied: true, Applied: true,
	}
}

func TestSecretBuildsEachRecordWithItsAnnotations(t *testing.T) {
	testCases := []struct {
		name       string
		rec        records.Record
		applied    bool
		wantName   string
		wantAnnots map[string]string
	}{{
		name: "attempt record", rec: fullRecord(), wantName: "captf-inputs-m-web-0",
		wantAnnots: map[string]string{
			infrav1.ImageAnnotation: "registry.example/m:v1", infrav1.IdentityAnnotation: "creds",
			infrav1.IdentityKindAnnotation: "Secret", infrav1.InputsHashAnnotation: "h2:aa",
			infrav1.JobAnnotation: "captf-m-web-0-apply-a1-abcdef", infrav1.MayHaveAppliedAnnotation: "true",
			infrav1.AppliedAnnotation: "true",
		},
	}, {
		name: "applied record: digest, no attempt marks", rec: fullRecord(), applied: true, wantName: "captf-applied-m-web-0",
		wantAnnots: map[string]string{
			infrav1.ImageAnnotation: "registry.example/m:v1", infrav1.ImageDigestAnnotation: "sha256:0123",
			infrav1.IdentityAnnotation: "creds", infrav1.IdentityKindAnnotation: "Secret",
			infrav1.InputsHashAnnotation: "h2:aa", infrav1.JobAnnotation: "captf-m-web-0-apply-a1-abcdef",
		},
	}, {
		name:       "an identity of kind TerraformClusterIdentity has no kind annotation; unset values are absent",
		rec:        records.Record{Job: "j", Identity: "id", IdentityKind: infrav1.IdentityKindTerraformClusterIdentity},
		wantName:   "captf-inputs-m-web-0",
		wantAnnots: map[string]string{infrav1.IdentityAnnotation: "id", infrav1.JobAnnotation: "j"},
	}}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := records.Secret("ns", owner, tc.rec, tc.applied)
			if err != nil {
				t.Fatal(err)
			}
			if s.Name != tc.wantName || s.Namespace != "ns" {
				t.Errorf("Secret is %s/%s, want ns/%s", s.Namespace, s.Name, tc.wantName)
			}
			if !maps.Equal(s.Annotations, tc.wantAnnots) {
				t.Errorf("annotations %v, want %v", s.Annotations, tc.wantAnnots)
			}
			wantLabels := map[string]string{infrav1.ManagedLabel: "true", infrav1.OwnerKindLabel: "TerraformMachine", infrav1.OwnerNameLabel: "web-0"}
			if !maps.Equal(s.Labels, wantLabels) {
				t.Errorf("labels %v, want %v (and never the clusterctl move label)", s.Labels, wantLabels)
			}
			if keys := slices.Sorted(maps.Keys(s.Data)); !slices.Equal(keys, []string{records.MainFile, records.TfvarsFile}) {
				t.Errorf("data keys %v, want exactly the two files", keys)
			}
			if len(s.OwnerReferences) != 1 || s.OwnerReferences[0].Controller != nil || s.OwnerReferences[0].BlockOwnerDeletion != nil ||
				s.OwnerReferences[0].UID != "uid-1" || s.OwnerReferences[0].Kind != "TerraformMachine" {
				t.Errorf("owner references %+v, want one plain reference to the object", s.OwnerReferences)
			}
		})
	}
}

func TestSecretLabelsALongOwnerNameByItsHash(t *testing.T) {
	o := owner
	o.Name = strings.Repeat("x", 64)
	s, err := records.Secret("ns", o, records.Record{}, false)
	if err != nil {
		t.Fatal(err)
	}
	if v := s.Labels[infrav1.OwnerNameLabel]; len(v) != 16 {
		t.Errorf("owner-name label %q, want 16 hex characters", v)
	}
}

func TestSecretRefusesWhatCannotBeARecord(t *testing.T) {
	for name, tc := range map[string]struct {
		ns    string
		owner metav1.OwnerReference
	}{
		"another kind":   {ns: "ns", owner: metav1.OwnerReference{Kind: "Machine", Name: "m", UID: "u"}},
		"no namespace":   {owner: owner},
		"no owner's UID": {ns: "ns", owner: metav1.OwnerReference{Kind: "TerraformCluster", Name: "c"}},
	} {
		if _, err := records.Secret(tc.ns, tc.owner, records.Record{}, false); err == nil {
			t.Errorf("%s: Secret returned no error", name)
		}
	}
}

func TestFromSecretReadsWhatSecretWrote(t *testing.T) {
	for _, applied := range []bool{false, true} {
		want := fullRecord()
		s, err := records.Secret("ns", owner, want, applied)
		if err != nil {
			t.Fatal(err)
		}
		got := records.FromSecret(s)
		want.Name = s.Name
		if applied {
			want.MayHaveApplied, want.Applied = false, false
		} else {
			want.ImageDigest = ""
		}
		if got.Name != want.Name || got.Job != want.Job || got.Image != want.Image || got.ImageDigest != want.ImageDigest ||
			got.Identity != want.Identity || got.IdentityKind != want.IdentityKind || got.InputsHash != want.InputsHash ||
			string(got.MainTF) != string(want.MainTF) || string(got.Tfvars) != string(want.Tfvars) ||
			got.MayHaveApplied != want.MayHaveApplied || got.Applied != want.Applied {
			t.Errorf("applied %v: FromSecret(Secret(rec)) = %+v, want %+v", applied, got, want)
		}
	}
	if got := records.FromSecret(nil); got.Name != "" || got.MainTF != nil {
		t.Errorf("FromSecret(nil) = %+v, want the zero Record", got)
	}
}

// TestSettled: an attempt record is settled until it knows of an apply
// that may have changed the state: of unknown outcome, possibly applied,
// or with partly applied exports.
func TestSettled(t *testing.T) {
	testCases := []struct {
		name string
		rec  *records.Record
		want bool
	}{
		{"no record", nil, true},
		{"an attempt that applied", &records.Record{Job: "j"}, true},
		{"an apply of unknown outcome", &records.Record{Job: "j", UnconfirmedApply: "j"}, false},
		{"an apply that may have applied", &records.Record{Job: "j", MayHaveApplied: true}, false},
		{"partly applied exports", &records.Record{Job: "j", PartialExports: `{"job":"j"}`}, false},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.rec.Settled(); got != tc.want {
				t.Errorf("Settled = %t, want %t", got, tc.want)
			}
		})
	}
}
