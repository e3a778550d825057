// Package modulecheck owns the module checks of tfcapi-lint: it reads a
// module directory (.tf, .tf.json, .tofu and .tofu.json files, and the
// local modules it calls) with the HashiCorp HCL libraries, never running
// a runtime, and reports where the module breaks the module contract of
// pkg/contract: inputs, outputs, pool autoscaling, backends and provider
// credentials, sources escaping the module, .tofu shadowing and versions.
package modulecheck
