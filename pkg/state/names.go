package state

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	infrav1 "captf.io/captf/api/v1alpha1"
)

// Workspace is the only backend workspace CAPTF uses; the runner drops
// TF_WORKSPACE so the runtime cannot pick another.
const Workspace = "default"

// Kinds whose state this package names.
const (
	KindCluster     = "TerraformCluster"
	KindMachine     = "TerraformMachine"
	KindMachinePool = "TerraformMachinePool"
)

// kindShort maps a workload kind to its short code, which the state
// suffix, Job names and record names carry. Letters only, so that a
// suffix never ends in -<digits> and cannot be mistaken for a chunk.
var kindShort = map[string]string{
	KindCluster:     infrav1.KindShortCluster,
	KindMachine:     infrav1.KindShortMachine,
	KindMachinePool: infrav1.KindShortMachinePool,
}

// KindShort returns the short code of a workload kind (c, m or mp), or ""
// for another kind.
func KindShort(kind string) string { return kindShort[kind] }

const (
	namePrefix  = "tfstate-" + Workspace + "-"
	partInfix   = "-part-"
	leasePrefix = "lock-"
)

// Suffix returns the state suffix of an object: the first 16 hex characters
// of SHA-256 over "<namespace>/<kind>/<name>", then "-" and the kind's short
// code (c, m or mp). kind is the API Kind as written, e.g. TerraformMachine.
// Names rather than UIDs keep the suffix stable across clusterctl move.
func Suffix(namespace, kind, name string) (string, error) {
	short, ok := kindShort[kind]
	if !ok {
		return "", fmt.Errorf("kind %q has no state suffix: want %s, %s or %s",
			kind, KindCluster, KindMachine, KindMachinePool)
	}
	if namespace == "" || name == "" {
		return "", fmt.Errorf("state suffix of a %s needs a namespace and a name", kind)
	}
	sum := sha256.Sum256([]byte(namespace + "/" + kind + "/" + name))
	return hex.EncodeToString(sum[:8]) + "-" + short, nil
}

// SecretName is the name of the base state Secret, chunk 0.
func SecretName(suffix string) string {
	return namePrefix + suffix
}

// ChunkName is the name of chunk index of a state: the base Secret for 0,
// "<base>-part-<index>" from 1 on.
func ChunkName(suffix string, index int) string {
	if index == 0 {
		return SecretName(suffix)
	}
	return SecretName(suffix) + partInfix + strconv.Itoa(index)
}

// LockLeaseName is the name of the Lease the backend holds while it runs.
func LockLeaseName(suffix string) string {
	return leasePrefix + SecretName(suffix)
}

// chunkIndex returns the index a Secret name stands for in the state of
// suffix. Only the canonical spelling is accepted ("-part-01" is not chunk
// 1), because the backend never writes anything else.
func chunkIndex(suffix, name string) (int, bool) {
	base := SecretName(suffix)
	if name == base {
		return 0, true
	}
	digits, ok := strings.CutPrefix(name, base+partInfix)
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(digits)
	if err != nil || n < 1 || strconv.Itoa(n) != digits {
		return 0, false
	}
	return n, true
}
