package records

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/protection"
	"captf.io/captf/pkg/state"
)

// Record is what one record Secret says, without its Kubernetes metadata.
type Record struct {
	// Name is the Secret's name; Secret ignores it and names the record
	// after its owner.
	Name string
	// Job names the apply Job whose inputs these are (captf.io/job).
	Job string
	// Image is the module image reference the Job ran, as written in the
	// object's spec (captf.io/image).
	Image string
	// ImageDigest is the digest the Job's pod reported (captf.io/image-digest;
	// applied record only), "" when unknown.
	ImageDigest string
	// Identity names the identity the Job used; IdentityKind is
	// infrav1.IdentityKindSecret for a Secret of the object's namespace and
	// "" for a TerraformClusterIdentity (captf.io/identity,
	// captf.io/identity-kind).
	Identity     string
	IdentityKind infrav1.IdentityKind
	// InputsHash is the inputs hash (captf.io/inputs-hash): h3:, or h2: when
	// an earlier release wrote it.
	InputsHash string
	// MainTF and Tfvars are the two files. They hold sensitive values.
	MainTF, Tfvars []byte
	// MayHaveApplied (attempt record only) says a failed apply of Job may
	// have changed resources (captf.io/may-have-applied).
	MayHaveApplied bool
	// Applied (attempt record only) says the object applied at least once
	// (captf.io/applied: "true"); never cleared.
	Applied bool
	// UnconfirmedApply (attempt record only) names an apply Job that ended
	// without a result after the runner started, or vanished: it may have
	// changed resources nobody knows of (captf.io/unconfirmed-apply).
	UnconfirmedApply string
	// UnpullableImages (attempt record only) are the images a destroy,
	// refresh, drift or restore Job could not pull
	// (captf.io/unpullable-images).
	UnpullableImages []string
	// AppliedExports (a pool's attempt record only) is the SHA-256 of the
	// cluster exports the newest successful apply rendered
	// (captf.io/applied-cluster-outputs-hash).
	AppliedExports string
	// PendingExports (a pool's attempt record only) is the JSON of the
	// exports change the pool holds back while its ExportsChange plan
	// waits (captf.io/pending-cluster-outputs).
	PendingExports string
	// PartialExports (a pool's attempt record only) is the JSON naming the
	// apply of an exports change that may have partly applied
	// (captf.io/partial-cluster-outputs).
	PartialExports string
	// RescuedSerial (attempt record only) is the serial of a state the
	// backend rejected and the runner saved as a backup set, until a
	// restore succeeds (captf.io/rescued-serial).
	RescuedSerial string
}

// Settled: the attempt record r (nil: none) knows of no apply that may
// have changed the state since the last one confirmed: none of unknown
// outcome, none that may have applied, no partly applied exports.
func (r *Record) Settled() bool {
	return r == nil || (r.UnconfirmedApply == "" && !r.MayHaveApplied && r.PartialExports == "")
}

// FromSecret reads a record Secret. A nil Secret gives the zero Record.
// The files are the Secret's own byte slices, not copies.
func FromSecret(s *corev1.Secret) Record {
	if s == nil {
		return Record{}
	}
	a := s.Annotations
	rec := Record{
		Name:        s.Name,
		Job:         a[infrav1.JobAnnotation],
		Image:       a[infrav1.ImageAnnotation],
		ImageDigest: a[infrav1.ImageDigestAnnotation],
		Identity:    a[infrav1.IdentityAnnotation],
		InputsHash:  a[infrav1.InputsHashAnnotation],
		MainTF:      s.Data[MainFile],
		Tfvars:      s.Data[TfvarsFile],
		Applied:     a[infrav1.AppliedAnnotation] == "true",
	}
	if a[infrav1.IdentityKindAnnotation] == string(infrav1.IdentityKindSecret) {
		rec.IdentityKind = infrav1.IdentityKindSecret
	}
	if v, ok := a[infrav1.MayHaveAppliedAnnotation]; ok && v != "false" {
		rec.MayHaveApplied = true
	}
	rec.UnconfirmedApply = a[infrav1.UnconfirmedApplyAnnotation]
	rec.UnpullableImages = SplitList(a[infrav1.UnpullableImagesAnnotation])
	rec.AppliedExports = a[infrav1.AppliedClusterOutputsHashAnnotation]
	rec.PendingExports = a[infrav1.PendingClusterOutputsAnnotation]
	rec.PartialExports = a[infrav1.PartialClusterOutputsAnnotation]
	rec.RescuedSerial = a[infrav1.RescuedSerialAnnotation]
	return rec
}

// OwnerReference is the owner reference a record holds to its object: not
// a controller reference, and not blocking the object's deletion. kind is
// the object's API Kind.
func OwnerReference(obj metav1.Object, kind string) metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion: infrav1.GroupVersion.String(),
		Kind:       kind,
		Name:       obj.GetName(),
		UID:        obj.GetUID(),
	}
}

// Secret builds the record Secret of rec for the object owner refers to,
// in namespace: the attempt record, or the applied record when applied is
// true. The name comes from owner's Kind and Name (rec.Name is ignored);
// the data holds exactly main.tf.json and terraform.tfvars.json; the
// labels are captf.io/managed and the owner kind and name (hashed past 63
// characters, as on the state); the annotations are those of the record's
// kind, each one only when set. owner becomes the only owner reference,
// without the controller and blockOwnerDeletion flags, and the record is
// protected (captf.io/state-protection) until cleanup deletes it.
func Secret(namespace string, owner metav1.OwnerReference, rec Record, applied bool) (*corev1.Secret, error) {
	name := AttemptName(owner.Kind, owner.Name)
	if applied {
		name = AppliedName(owner.Kind, owner.Name)
	}
	if name == "" {
		return nil, fmt.Errorf("kind %q has no inputs record: want %s, %s or %s", owner.Kind, state.KindCluster, state.KindMachine, state.KindMachinePool)
	}
	if namespace == "" || owner.UID == "" {
		return nil, fmt.Errorf("the inputs record of %s %s needs a namespace and the object's UID", owner.Kind, owner.Name)
	}
	return &corev1.Secret{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Namespace:   namespace,
			Labels:      labels(owner.Kind, owner.Name),
			Annotations: annotations(rec, applied),
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: owner.APIVersion, Kind: owner.Kind, Name: owner.Name, UID: owner.UID,
			}},
			Finalizers: []string{protection.Finalizer},
		},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{MainFile: rec.MainTF, TfvarsFile: rec.Tfvars},
	}, nil
}

func labels(kind, name string) map[string]string {
	owner := state.OwnerLabels(kind, name, "")
	return map[string]string{
		infrav1.ManagedLabel:   "true",
		infrav1.OwnerKindLabel: owner[state.LabelOwnerKind],
		infrav1.OwnerNameLabel: owner[state.LabelOwnerName],
	}
}

// attemptKeys and appliedKeys are the annotations each record owns; an
// update replaces them and leaves every other annotation alone.
var (
	attemptKeys = []string{
		infrav1.ImageAnnotation, infrav1.IdentityAnnotation, infrav1.IdentityKindAnnotation,
		infrav1.InputsHashAnnotation, infrav1.JobAnnotation, infrav1.MayHaveAppliedAnnotation,
		infrav1.AppliedAnnotation,
	}
	appliedKeys = []string{
		infrav1.ImageAnnotation, infrav1.ImageDigestAnnotation, infrav1.IdentityAnnotation,
		infrav1.IdentityKindAnnotation, infrav1.InputsHashAnnotation, infrav1.JobAnnotation,
	}
)

func annotations(rec Record, applied bool) map[string]string {
	a := map[string]string{}
	set := func(k, v string) {
		if v != "" {
			a[k] = v
		}
	}
	set(infrav1.ImageAnnotation, rec.Image)
	set(infrav1.IdentityAnnotation, rec.Identity)
	if rec.IdentityKind == infrav1.IdentityKindSecret {
		a[infrav1.IdentityKindAnnotation] = string(infrav1.IdentityKindSecret)
	}
	set(infrav1.InputsHashAnnotation, rec.InputsHash)
	set(infrav1.JobAnnotation, rec.Job)
	if applied {
		set(infrav1.ImageDigestAnnotation, rec.ImageDigest)
		return a
	}
	if rec.MayHaveApplied {
		a[infrav1.MayHaveAppliedAnnotation] = "true"
	}
	if rec.Applied {
		a[infrav1.AppliedAnnotation] = "true"
	}
	return a
}

// merge makes existing say what desired says, keeping what others wrote:
// labels and annotations the record does not own stay, and the attempt
// record's captf.io/applied is never removed. It reports whether anything
// changed.
func merge(existing, desired *corev1.Secret, applied bool) bool {
	before := existing.DeepCopy()
	if existing.Labels == nil {
		existing.Labels = map[string]string{}
	}
	for k, v := range desired.Labels {
		existing.Labels[k] = v
	}
	keys := attemptKeys
	if applied {
		keys = appliedKeys
	}
	wasApplied := existing.Annotations[infrav1.AppliedAnnotation] == "true"
	if existing.Annotations == nil {
		existing.Annotations = map[string]string{}
	}
	for _, k := range keys {
		delete(existing.Annotations, k)
	}
	for k, v := range desired.Annotations {
		existing.Annotations[k] = v
	}
	if wasApplied && !applied {
		existing.Annotations[infrav1.AppliedAnnotation] = "true"
	}
	existing.OwnerReferences = desired.OwnerReferences
	existing.Data = desired.Data
	protection.Protect(existing)
	return !equalSecrets(before, existing)
}

func equalSecrets(a, b *corev1.Secret) bool {
	return equality.Semantic.DeepEqual(a.Labels, b.Labels) &&
		equality.Semantic.DeepEqual(a.Annotations, b.Annotations) &&
		equality.Semantic.DeepEqual(a.OwnerReferences, b.OwnerReferences) &&
		equality.Semantic.DeepEqual(a.Finalizers, b.Finalizers) &&
		equality.Semantic.DeepEqual(a.Data, b.Data)
}

// SplitList reads a comma-separated annotation (such as
// captf.io/unpullable-images), dropping empty items.
func SplitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
