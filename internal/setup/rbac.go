package setup

// The manager's own needs beyond its controllers: the metrics endpoint
// authenticates and authorizes its scrapers, and the webhooks check
// requesters with SubjectAccessReviews. `make generate` turns these
// markers into config/rbac/role.yaml.

// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=terraformplans,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=terraformplans/status;terraformclusteridentities/status,verbs=patch
