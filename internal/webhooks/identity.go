package webhooks

import (
	"context"
	"errors"
	"fmt"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	infrav1 "captf.io/captf/api/v1alpha1"
)

// IdentityValidator validates TerraformClusterIdentity create and update.
// Besides the shape of the spec, it proves that the requesting user may get
// the source Secret: otherwise a role that may manage identities but not
// read Secrets could have the manager mirror any Secret into a namespace it
// can read.
type IdentityValidator struct {
	// Client creates SubjectAccessReviews.
	Client client.Client
}

var _ admission.Validator[*infrav1.TerraformClusterIdentity] = &IdentityValidator{}

// ValidateCreate checks the spec and always runs the access review.
func (v *IdentityValidator) ValidateCreate(ctx context.Context, id *infrav1.TerraformClusterIdentity) (admission.Warnings, error) {
	if errs := validateIdentitySpec(id); len(errs) > 0 {
		return nil, identityInvalid(id, errs)
	}
	return nil, v.reviewAccess(ctx, id)
}

// ValidateUpdate checks the spec, and runs the access review only when
// spec.secretRef or spec.allowedNamespaces changed (in either direction);
// metadata-only updates skip it.
func (v *IdentityValidator) ValidateUpdate(ctx context.Context, old, id *infrav1.TerraformClusterIdentity) (admission.Warnings, error) {
	if errs := validateIdentitySpec(id); len(errs) > 0 {
		return nil, identityInvalid(id, errs)
	}
	if equality.Semantic.DeepEqual(old.Spec.SecretRef, id.Spec.SecretRef) &&
		equality.Semantic.DeepEqual(old.Spec.AllowedNamespaces, id.Spec.AllowedNamespaces) {
		return nil, nil
	}
	return nil, v.reviewAccess(ctx, id)
}

// ValidateDelete allows the delete: the delete check is a separate webhook
// entry (IdentityDeleteValidator).
func (v *IdentityValidator) ValidateDelete(context.Context, *infrav1.TerraformClusterIdentity) (admission.Warnings, error) {
	return nil, nil
}

// validateIdentitySpec checks what the CRD schema also checks (defence in
// depth) and what it cannot: that the selector parses.
func validateIdentitySpec(id *infrav1.TerraformClusterIdentity) field.ErrorList {
	var errs field.ErrorList
	ref := field.NewPath("spec", "secretRef")
	if id.Spec.SecretRef.Name == "" {
		errs = append(errs, field.Required(ref.Child("name"), "name the source Secret"))
	} else {
		for _, msg := range validation.IsDNS1123Subdomain(id.Spec.SecretRef.Name) {
			errs = append(errs, field.Invalid(ref.Child("name"), id.Spec.SecretRef.Name, msg))
		}
	}
	if id.Spec.SecretRef.Namespace == "" {
		errs = append(errs, field.Required(ref.Child("namespace"), "name the namespace of the source Secret; it is never defaulted"))
	} else {
		for _, msg := range validation.IsDNS1123Label(id.Spec.SecretRef.Namespace) {
			errs = append(errs, field.Invalid(ref.Child("namespace"), id.Spec.SecretRef.Namespace, msg))
		}
	}
	return append(errs, validateAllowedNamespaces(id.Spec.AllowedNamespaces, field.NewPath("spec", "allowedNamespaces"))...)
}

func validateAllowedNamespaces(an *infrav1.AllowedNamespaces, path *field.Path) field.ErrorList {
	if an == nil {
		return nil
	}
	if len(an.List) == 0 && an.Selector == nil {
		return field.ErrorList{field.Invalid(path, "{}",
			"allowedNamespaces {} is ambiguous: to allow every namespace write `selector: {}`; to allow none, remove allowedNamespaces")}
	}
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, ns := range an.List {
		if seen[ns] {
			errs = append(errs, field.Duplicate(path.Child("list").Index(i), ns))
		}
		seen[ns] = true
		for _, msg := range validation.IsDNS1123Label(ns) {
			errs = append(errs, field.Invalid(path.Child("list").Index(i), ns, msg))
		}
	}
	if an.Selector != nil {
		sel := path.Child("selector")
		selErrs := metav1validation.ValidateLabelSelector(an.Selector, metav1validation.LabelSelectorValidationOptions{}, sel)
		if len(selErrs) == 0 {
			if _, err := metav1.LabelSelectorAsSelector(an.Selector); err != nil {
				selErrs = append(selErrs, field.Invalid(sel, an.Selector.String(), err.Error()))
			}
		}
		errs = append(errs, selErrs...)
	}
	return errs
}

// reviewAccess asks the API server whether the requesting user (name, UID,
// groups and extra, as the API server authenticated them) may get the source
// Secret.
func (v *IdentityValidator) reviewAccess(ctx context.Context, id *infrav1.TerraformClusterIdentity) error {
	req, err := admission.RequestFromContext(ctx)
	if err != nil {
		return errors.New("the admission request is missing, so the requesting user cannot be checked")
	}
	user := req.UserInfo
	extra := make(map[string]authorizationv1.ExtraValue, len(user.Extra))
	for k, v := range user.Extra {
		extra[k] = authorizationv1.ExtraValue(v)
	}
	ref := id.Spec.SecretRef
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: user.Username, UID: user.UID, Groups: user.Groups, Extra: extra,
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: ref.Namespace, Verb: "get", Group: "", Version: "v1", Resource: "secrets", Name: ref.Name,
		},
	}}
	if err := v.Client.Create(ctx, sar); err != nil {
		return apierrors.NewInternalError(fmt.Errorf("checking whether user %q may get Secret %s/%s: %w", user.Username, ref.Namespace, ref.Name, err))
	}
	if sar.Status.Allowed {
		return nil
	}
	ctrl.LoggerFrom(ctx).Info("Refusing TerraformClusterIdentity: the user may not get its Secret",
		"identity", id.Name, "user", user.Username, "secret", ref.Namespace+"/"+ref.Name)
	return identityInvalid(id, field.ErrorList{field.Forbidden(field.NewPath("spec", "secretRef"),
		fmt.Sprintf("user %q may not get Secret %s/%s; an identity may only name a Secret its author can read: get that right, or have someone who has it make this change",
			user.Username, ref.Namespace, ref.Name))})
}

func identityInvalid(id *infrav1.TerraformClusterIdentity, errs field.ErrorList) error {
	return apierrors.NewInvalid(infrav1.GroupVersion.WithKind("TerraformClusterIdentity").GroupKind(), id.Name, errs)
}
