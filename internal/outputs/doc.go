// Package outputs owns the step from a module's root outputs, as decoded
// from state, to the Cluster API contract fields of its role and the two
// conditions that judge them (module contract v1alpha1, §10):
//
//   - ReadCluster, ReadMachine and ReadPool normalise the outputs
//     (contract.NormalizeOutputs), validate them against the role's
//     published schema (contract.ValidateOutputs), add the checks a schema
//     cannot express (unique failure-domain names, the machine's requested
//     failure domain, a provider ID that changed after it was written, CRD
//     limits the outputs schema leaves open) and convert what is valid:
//     addresses in canonical order, provider_id_list sorted and without
//     duplicates, at most 1000 pool instances, compact exports.
//   - A Report is the OutputsValid verdict: every problem found, and the
//     condition they give under the documented precedence.
//   - Health is the module's health output; its Condition is
//     InfrastructureHealthy.
//
// Validity gates writing: when a Report is not Valid (an output is missing
// or invalid, the failure domain differs from the request, or the provider
// ID changed) every contract field of the returned role value is its zero
// value, so a caller keeps what it wrote before. Only Health, which feeds a
// condition rather than a contract field, is still returned when the
// health output itself is valid. Outputs that are not known yet (null) do
// not make a Report invalid: they are OutputsPending, their fields are zero
// and Report.IsPending names them, so a caller keeps the previous value of
// exactly those.
//
// Outputs may be sensitive. No message, error or String of this package
// quotes an output value: messages name the output, the place in it and the
// rule it breaks. The one documented exception is the health output's
// message and reasons, which the contract surfaces in InfrastructureHealthy.
//
// The package is pure: it reads nothing and writes nothing.
package outputs
