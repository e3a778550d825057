// Package kubelet is a stand-in kubelet for integration tests that run a
// real control plane (internal/test/envtest with the Job controller) but no
// node: it starts an internal/localnode node in ModeInProcess for the pods
// of CAPTF runner Jobs, and runs each one for real.
//
// For every pending pod labelled captf.io/managed=true it binds the pod to
// a Node of its own, lays out the module container's filesystem in a
// temporary directory (the image's module, the runtime and the provider
// mirror of the tool cache, and every volume mount with its Secret or
// ConfigMap content read live), resolves the container's env and envFrom,
// and runs the container's `runner run` arguments in-process with the real
// runner (internal/runner) against real tofu or terraform. Every path the
// arguments name is a path in that filesystem; only the backend's
// in_cluster_config becomes a kubeconfig of the test API server. The pod's
// status then goes the way a kubelet takes it: Running, then Succeeded or
// Failed with the result document as the termination message, which lets
// kube-controller-manager finish the Job.
//
// Like a kubelet, it leaves a pod whose image it does not know Pending with
// the container waiting in ErrImagePull, keeps a pod whose Secrets do not
// exist yet waiting until they do, delivers a pod's deletion to the runner
// as SIGTERM (closing runner.Env.Stop) and completes the deletion once the
// run ended. Each pod runs at most once; pods run in parallel.
//
// What it does not do: run other containers than the runner (the init
// container copying the runner is reported completed), pull anything,
// enforce resources or security contexts, refresh mounted Secrets, isolate
// the runtime's hostname (the state lock records the test host's), or kill
// a run that outlives the pod's grace period (the runner's own stop timeout
// applies). internal/localnode's ModeNamespace does most of that; the
// end-to-end suite runs it.
package kubelet
