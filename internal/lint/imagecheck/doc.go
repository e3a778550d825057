// Package imagecheck owns the image checks of tfcapi-lint: it reads a
// module image (from its registry or an OCI image layout directory, for
// one platform of an index or all of them) without a container daemon,
// applies its layers in order (whiteouts included) keeping only what the
// checks need within fixed caps, and reports where the image breaks the
// image contract: the module at /captf/module (handed, extracted, to the
// module checks), the runtime at /captf/runtime, the paths a Job mounts,
// the provider mirror at /captf/providers, the io.captf.* labels, the
// user, the entrypoint and the platform.
package imagecheck
