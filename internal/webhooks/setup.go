package webhooks

import (
	"errors"
	"os"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/imagemeta"
)

// Paths the validators are served at; config/webhook names them.
const (
	// IdentityPath validates TerraformClusterIdentity create and update
	// (failurePolicy Fail).
	IdentityPath = "/validate-infrastructure-cluster-x-k8s-io-v1alpha1-terraformclusteridentity"
	// IdentityDeletePath validates TerraformClusterIdentity delete; a separate
	// entry with failurePolicy Ignore.
	IdentityDeletePath = "/validate-delete-infrastructure-cluster-x-k8s-io-v1alpha1-terraformclusteridentity"
	// ClusterPath validates TerraformCluster create and update.
	ClusterPath = "/validate-infrastructure-cluster-x-k8s-io-v1alpha1-terraformcluster"
	// MachinePath validates TerraformMachine create and update.
	MachinePath = "/validate-infrastructure-cluster-x-k8s-io-v1alpha1-terraformmachine"
	// MachinePoolPath validates TerraformMachinePool create and update.
	MachinePoolPath = "/validate-infrastructure-cluster-x-k8s-io-v1alpha1-terraformmachinepool"
)

// ManagerUser is the manager's own username, from the downward-API
// environment variables POD_NAMESPACE and SERVICE_ACCOUNT_NAME; "" when
// either is missing (the manager warns at start).
func ManagerUser() string {
	ns, sa := os.Getenv("POD_NAMESPACE"), os.Getenv("SERVICE_ACCOUNT_NAME")
	if ns == "" || sa == "" {
		return ""
	}
	return "system:serviceaccount:" + ns + ":" + sa
}

// SetupWebhooks registers every validator on mgr's webhook server. The
// identity validator creates SubjectAccessReviews with mgr's client (the
// manager needs create on subjectaccessreviews); the delete check lists
// workload objects through mgr's API reader, uncached.
//
// images reads module images' labels for the runtime switch check of
// TerraformCluster and TerraformMachinePool updates (nil skips it).
func SetupWebhooks(mgr ctrl.Manager, images imagemeta.Reader) error {
	if mgr.GetScheme() == nil || !mgr.GetScheme().Recognizes(infrav1.GroupVersion.WithKind("TerraformClusterIdentity")) {
		return errors.New("the manager's scheme lacks the CAPTF kinds; add api/v1alpha1 to it")
	}
	s, srv := mgr.GetScheme(), mgr.GetWebhookServer()
	srv.Register(IdentityPath, admission.WithValidator[*infrav1.TerraformClusterIdentity](s, &IdentityValidator{Client: mgr.GetClient()}))
	srv.Register(IdentityDeletePath, admission.WithValidator[*infrav1.TerraformClusterIdentity](s, &IdentityDeleteValidator{Reader: mgr.GetAPIReader()}))
	srv.Register(ClusterPath, admission.WithValidator[*infrav1.TerraformCluster](s, &ClusterValidator{RuntimeSwitch: RuntimeSwitch{Images: images, Reader: mgr.GetAPIReader()}}))
	srv.Register(MachinePath, admission.WithValidator[*infrav1.TerraformMachine](s, &MachineValidator{ManagerUser: ManagerUser()}))
	srv.Register(MachineDeletePath, admission.WithValidator[*infrav1.TerraformMachine](s, &MachineDeleteValidator{Reader: mgr.GetAPIReader()}))
	srv.Register(MachinePoolPath, admission.WithValidator[*infrav1.TerraformMachinePool](s, &MachinePoolValidator{RuntimeSwitch: RuntimeSwitch{Images: images, Reader: mgr.GetAPIReader()}}))
	srv.Register(PlanPath, admission.WithValidator[*infrav1.TerraformPlan](s, &PlanValidator{ManagerUser: ManagerUser()}))
	srv.Register(ClusterTemplatePath, admission.WithValidator[*infrav1.TerraformClusterTemplate](s, ClusterTemplateValidator{}))
	srv.Register(MachineTemplatePath, admission.WithValidator[*infrav1.TerraformMachineTemplate](s, MachineTemplateValidator{}))
	srv.Register(MachinePoolTemplatePath, admission.WithValidator[*infrav1.TerraformMachinePoolTemplate](s, MachinePoolTemplateValidator{}))
	return nil
}
