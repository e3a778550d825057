package records

import (
	"crypto/sha256"
	"encoding/hex"

	"captf.io/captf/pkg/state"
)

// The data keys of a record, the same two files a per-run Secret holds and
// the runner copies into the generated root.
const (
	MainFile   = "main.tf.json"
	TfvarsFile = "terraform.tfvars.json"
)

// Name prefixes of the two records.
const (
	AttemptPrefix = "captf-inputs-"
	AppliedPrefix = "captf-applied-"
	PlanKeyPrefix = "captf-plankey-"
)

// maxNameLength is the longest name a Secret may have.
const maxNameLength = 253

// AttemptName returns the name of the attempt record of an object:
// captf-inputs-<kindshort>-<name>. kind is the API Kind as written
// (TerraformCluster, TerraformMachine, TerraformMachinePool); another kind
// gives "".
func AttemptName(kind, name string) string {
	return recordName(AttemptPrefix, kind, name)
}

// AppliedName returns the name of the applied record of an object:
// captf-applied-<kindshort>-<name>, or "" for another kind.
func AppliedName(kind, name string) string {
	return recordName(AppliedPrefix, kind, name)
}

// PlanKeyData is the data key of the plan key Secret: 32 random bytes.
const PlanKeyData = "key"

// PlanKeyName returns the name of an object's plan key Secret, the key
// of its plan, inputs and approval hashes:
// captf-plankey-<kindshort>-<name>, or "" for another kind.
func PlanKeyName(kind, name string) string {
	return recordName(PlanKeyPrefix, kind, name)
}

// recordName is <prefix><kindshort>-<name>, or the prefix, the kind short
// code and the first 16 hex characters of the SHA-256 of the object's name
// when the full name would exceed 253 characters (the way CAPTF shortens
// every Secret name that does not fit).
func recordName(prefix, kind, name string) string {
	short := state.KindShort(kind)
	if short == "" || name == "" {
		return ""
	}
	full := prefix + short + "-" + name
	if len(full) <= maxNameLength {
		return full
	}
	sum := sha256.Sum256([]byte(name))
	return prefix + short + "-" + hex.EncodeToString(sum[:8])
}
