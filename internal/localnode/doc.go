// Package localnode is the node agent of CAPTF's local environment
// (cmd/captf-dev) and of the tests that run Jobs for real: it plays the
// kubelet of one Node of a real control plane, with no container runtime.
//
// It registers the Node, binds every pending pod it is given to it, and
// takes each pod through its life once: it writes the pod's volumes
// (emptyDir, Secret, ConfigMap and projected Secret/ConfigMap volumes, with
// their modes, owned by the pod's fsGroup), resolves each container's env
// and envFrom (reading Secrets and ConfigMaps live, expanding $(NAME)),
// runs the init containers in order and then the containers, and reports
// the pod's status the way a kubelet does: Pending with the reason a
// container waits for (ErrImagePull for an image reference it does not
// have, then ImagePullBackOff until it tries again, with a backoff that
// doubles up to 5 minutes: an image added meanwhile (AddImage, or written
// to the store) is pulled then; PodInitializing while a volume's Secret does not exist yet,
// CreateContainerConfigError for an env source that is missing), Running,
// then Succeeded or Failed with each container's exit code and its
// termination message read back from the file at terminationMessagePath. A
// pod's deletion, and its spec.activeDeadlineSeconds, are delivered as
// SIGTERM and then SIGKILL once the grace period is over; a deleted pod
// that runs nothing has its deletion completed. With MaxPods, the Node's
// pod capacity, it runs at most that many pods at once, as a full node
// would: the others stay Pending and unbound until a running one ends,
// and are then taken oldest first. Each container's output is
// kept under the state directory (ReadLog), for `captf-dev logs`.
//
// Images are local: an Image maps paths of an image's filesystem to host
// files and directories (ModuleImage lays out a module image per the image
// contract: /captf/module, /captf/runtime, /captf/providers; RunnerImage
// the manager's image, holding /runner). A node has such images in memory
// and pulls the other references from an image store, a directory holding
// each image's root filesystem at <store>/<repository>/<tag> (WriteImage
// lays one out).
//
// Containers run in one of two modes:
//
//   - ModeNamespace (root on Linux): each container is a real process in a
//     private mount and UTS namespace, chrooted into a fresh tmpfs root that
//     holds the host's /usr, /bin, /lib* and /etc read-only as a base layer,
//     a minimal /dev and /proc, the image's paths read-only, every volume
//     mount at its mount path (read-only when the mount says so), the
//     container's termination log at its terminationMessagePath and, unless
//     the pod opts out, a service account token bound to the pod at
//     /var/run/secrets/kubernetes.io/serviceaccount (the control plane runs
//     without the ServiceAccount admission plugin, so the node plays it).
//     The process runs as the pod's runAsUser/runAsGroup with fsGroup and
//     supplementalGroups, with the pod's name as hostname, and its root is
//     read-only when readOnlyRootFilesystem says so. The Job's init
//     container copies the real runner binary from the runner image, and
//     the module container runs it: the runner has no test mode and sees
//     the standard paths. Nothing is created on the host outside the state
//     directory.
//   - ModeInProcess (anywhere else, or when asked): only containers whose
//     command is `runner run` run, in this process, with internal/runner;
//     the init container that copies the runner is reported completed
//     without running. The container's filesystem is a directory standing
//     for "/", every path of the runner's flags and of its env is moved
//     into it, and the backend's in_cluster_config becomes the node's
//     kubeconfig.
//
// What it does not do, in either mode: pull anything, restart containers,
// enforce resources, capabilities or seccomp, give pods their own network
// or PID namespace, refresh mounted Secrets or tokens, or run sidecars.
// In ModeInProcess it cannot change users, and a run that outlives its
// grace period is not killed (the runner's own stop timeout applies).
package localnode
