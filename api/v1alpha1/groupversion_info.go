package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupVersion is the API group and version of every CAPTF kind.
var GroupVersion = schema.GroupVersion{Group: "infrastructure.cluster.x-k8s.io", Version: "v1alpha1"}

// objectTypes are the kinds the type files register in their init.
var objectTypes []runtime.Object

// register adds kinds to the ones AddToScheme installs.
func register(objects ...runtime.Object) {
	objectTypes = append(objectTypes, objects...)
}

// AddToScheme adds the CAPTF kinds to a runtime.Scheme.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, objectTypes...)
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
