package jobs

import (
	"errors"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// allowedSELinuxTypes are the SELinux types the Pod Security baseline
// allows; "" (unset) too.
var allowedSELinuxTypes = map[string]bool{
	"": true, "container_t": true, "container_init_t": true, "container_kvm_t": true, "container_engine_t": true,
}

// safeSysctls are the Pod Security Standards' safe sysctls.
var safeSysctls = map[string]bool{
	"kernel.shm_rmid_forced": true, "net.ipv4.ip_local_port_range": true, "net.ipv4.ip_unprivileged_port_start": true,
	"net.ipv4.tcp_syncookies": true, "net.ipv4.ping_group_range": true, "net.ipv4.ip_local_reserved_ports": true,
	"net.ipv4.tcp_keepalive_time": true, "net.ipv4.tcp_fin_timeout": true, "net.ipv4.tcp_keepalive_intvl": true,
	"net.ipv4.tcp_keepalive_probes": true,
}

const weakens = "weakens the Job's isolation; remove it (the module runs with the Job's secure defaults)"

// The Pod Security rules of a jobs policy, which the admission webhook
// applies to spec.jobs and spec.defaults.jobs and the manager to the
// effective policy before building any Job (Policy.ValidateSecurity): an
// object written while the webhook was down, or before a rule existed,
// runs nothing that weakens the Job's isolation.

// ValidateSecurityContext refuses what would weaken the module container's
// defaults (seccomp RuntimeDefault, no privilege escalation, all
// capabilities dropped, read-only root filesystem).
func ValidateSecurityContext(sc *corev1.SecurityContext, path *field.Path) field.ErrorList {
	if sc == nil {
		return nil
	}
	var errs field.ErrorList
	if sc.Privileged != nil && *sc.Privileged {
		errs = append(errs, field.Forbidden(path.Child("privileged"), weakens))
	}
	if sc.AllowPrivilegeEscalation != nil && *sc.AllowPrivilegeEscalation {
		errs = append(errs, field.Forbidden(path.Child("allowPrivilegeEscalation"), weakens))
	}
	if sc.Capabilities != nil && len(sc.Capabilities.Add) > 0 {
		errs = append(errs, field.Forbidden(path.Child("capabilities", "add"), weakens))
	}
	if sc.ReadOnlyRootFilesystem != nil && !*sc.ReadOnlyRootFilesystem {
		errs = append(errs, field.Forbidden(path.Child("readOnlyRootFilesystem"), weakens+"; relocate what the provider writes to /tmp or /captf/work"))
	}
	if sc.ProcMount != nil && *sc.ProcMount == corev1.UnmaskedProcMount {
		errs = append(errs, field.Forbidden(path.Child("procMount"), weakens))
	}
	return append(errs, commonSecurity(sc.SeccompProfile, sc.AppArmorProfile, sc.SELinuxOptions, sc.WindowsOptions,
		sc.RunAsUser, sc.RunAsNonRoot, path)...)
}

// ValidatePodSecurityContext applies the same rules to the pod's security
// context, and allows only the Pod Security Standards' safe sysctls.
func ValidatePodSecurityContext(sc *corev1.PodSecurityContext, path *field.Path) field.ErrorList {
	if sc == nil {
		return nil
	}
	errs := commonSecurity(sc.SeccompProfile, sc.AppArmorProfile, sc.SELinuxOptions, sc.WindowsOptions, sc.RunAsUser, sc.RunAsNonRoot, path)
	for i, s := range sc.Sysctls {
		if !safeSysctls[s.Name] {
			errs = append(errs, field.Forbidden(path.Child("sysctls").Index(i).Child("name"), "only the Pod Security Standards' safe sysctls are allowed"))
		}
	}
	return errs
}

func commonSecurity(seccomp *corev1.SeccompProfile, apparmor *corev1.AppArmorProfile, selinux *corev1.SELinuxOptions,
	windows *corev1.WindowsSecurityContextOptions, runAsUser *int64, runAsNonRoot *bool, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if seccomp != nil && seccomp.Type == corev1.SeccompProfileTypeUnconfined {
		errs = append(errs, field.Forbidden(path.Child("seccompProfile", "type"), weakens))
	}
	if apparmor != nil && apparmor.Type == corev1.AppArmorProfileTypeUnconfined {
		errs = append(errs, field.Forbidden(path.Child("appArmorProfile", "type"), weakens))
	}
	if selinux != nil {
		if !allowedSELinuxTypes[selinux.Type] {
			errs = append(errs, field.Forbidden(path.Child("seLinuxOptions", "type"), weakens))
		}
		if selinux.User != "" {
			errs = append(errs, field.Forbidden(path.Child("seLinuxOptions", "user"), weakens))
		}
		if selinux.Role != "" {
			errs = append(errs, field.Forbidden(path.Child("seLinuxOptions", "role"), weakens))
		}
	}
	if windows != nil && windows.HostProcess != nil && *windows.HostProcess {
		errs = append(errs, field.Forbidden(path.Child("windowsOptions", "hostProcess"), weakens))
	}
	if runAsUser != nil && *runAsUser == 0 {
		errs = append(errs, field.Forbidden(path.Child("runAsUser"), "asks for root explicitly; leave it unset (root images still run as root) or pick a non-root user"))
	}
	if runAsNonRoot != nil && !*runAsNonRoot {
		errs = append(errs, field.Forbidden(path.Child("runAsNonRoot"), "asks for root explicitly; leave it unset"))
	}
	return errs
}

// ValidateSecurity applies the Pod Security rules to the effective
// security contexts; its message names each offending field where the
// user wrote it (the object's spec.jobs or its TerraformCluster's) and
// what to do. It holds for every operation, destroy and restore included.
func (p Policy) ValidateSecurity() error {
	var msgs []string
	for _, e := range ValidateSecurityContext(p.SecurityContext, field.NewPath("securityContext")) {
		msgs = append(msgs, describeField(p.SecurityContextFrom, e))
	}
	for _, e := range ValidatePodSecurityContext(p.PodSecurityContext, field.NewPath("podSecurityContext")) {
		msgs = append(msgs, describeField(p.PodSecurityContextFrom, e))
	}
	if len(msgs) == 0 {
		return nil
	}
	return errors.New("the jobs policy weakens the Job's isolation, so no Job runs: " + strings.Join(msgs, "; "))
}

// describeField names a field error where its policy came from.
func describeField(from Origin, e *field.Error) string {
	where := string(from) + "." + e.Field
	if from == "" || from == FromDefault {
		where = e.Field
	}
	return where + ": " + e.Detail
}
