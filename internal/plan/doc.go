// Package plan owns what CAPTF reads from a saved plan: it turns the document
// a runtime prints for `show -json <planfile>` (Terraform or OpenTofu) into
//
//   - a Summary: the counts and "<address> (<labels>)" resource list shown on
//     a TerraformPlan and in a runner result, plus the drift counts of a
//     drift run;
//   - the keyed "p2:" fingerprint that binds an approval to the exact plan
//     (see Fingerprint and the effect encoding in effect.go);
//   - the destructive check that stops a guarded apply (see
//     Plan.Destructive).
//
// The plan JSON carries every input value of the module, sensitive ones
// included. Nothing in this package logs it, and no error it returns quotes
// it: errors name only the problem and where it is ("plan JSON: unexpected
// end of input", "plan JSON: syntax error at byte 120"). The fingerprint
// binds values only through HMAC-SHA256 under the per-object plan key, so
// the hash reveals nothing about them.
//
// The package uses only the standard library: the runner, a small static
// binary, and the manager both import it.
package plan
