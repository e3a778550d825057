package custody

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "captf.io/captf/api/v1alpha1"
	"captf.io/captf/internal/inputs"
	"captf.io/captf/internal/protection"
	"captf.io/captf/internal/records"
	"captf.io/captf/internal/test/envtest"
	"captf.io/captf/pkg/state"
)

// env is the real API server the Secrets are kept on.
var env *envtest.Env

func TestMain(m *testing.M) {
	os.Exit(envtest.Main(m, &env, envtest.Options{}))
}

// cluster makes a TerraformCluster in a namespace of its own.
func cluster(t *testing.T, prefix string) *infrav1.TerraformCluster {
	t.Helper()
	tc := &infrav1.TerraformCluster{ObjectMeta: metav1.ObjectMeta{Namespace: envtest.Namespace(t, env.Client, prefix), Name: "c"},
		Spec: infrav1.TerraformClusterSpec{Source: infrav1.SourceSpec{Image: "example.test/cluster:1"}, IdentityRef: &infrav1.IdentityReference{Name: "cloud"}}}
	if err := env.Client.Create(t.Context(), tc); err != nil {
		t.Fatal(err)
	}
	return tc
}

// suffixOf is the state suffix of a TerraformCluster.
func suffixOf(t *testing.T, tc *infrav1.TerraformCluster) string {
	t.Helper()
	suffix, err := state.Suffix(tc.Namespace, "TerraformCluster", tc.Name)
	if err != nil {
		t.Fatal(err)
	}
	return suffix
}

// TestThePlanKeyIsKept: an object has no plan key until one is written;
// the key written is the key read, owned by the object and protected; a
// second write is refused as the API server refuses it (the pass that made
// it keyed nothing with it yet); a key too short to key anything says how
// to get a new one; a key retained with the state is not deleted with the
// object, another is.
func TestThePlanKeyIsKept(t *testing.T) {
	envtest.Require(t, env)
	ctx := t.Context()
	k := Keeper{Client: env.Client, Reader: env.Client}
	const kind = "TerraformCluster"
	tc := cluster(t, "plankey")
	if key, err := k.ReadPlanKey(ctx, tc, kind); err != nil || key != nil {
		t.Fatalf("before any write: ReadPlanKey = %v, %v; want no key", key, err)
	}
	key := []byte(strings.Repeat("k", inputs.MinKeyBytes))
	if ephemeral, err := k.WritePlanKey(ctx, tc, kind, key); err != nil || ephemeral {
		t.Fatalf("WritePlanKey = %v, %v; want it written", ephemeral, err)
	}
	if got, err := k.ReadPlanKey(ctx, tc, kind); err != nil || string(got) != string(key) {
		t.Fatalf("ReadPlanKey = %q, %v; want the key written", got, err)
	}
	s := &corev1.Secret{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: tc.Namespace, Name: records.PlanKeyName(kind, tc.Name)}, s); err != nil {
		t.Fatal(err)
	}
	if !protection.Protected(s) || !HasOwner(s, tc) {
		t.Errorf("the plan key of a live object is not owned by it and protected: finalizers %v, owners %v", s.Finalizers, s.OwnerReferences)
	}
	if _, err := k.WritePlanKey(ctx, tc, kind, key); !apierrors.IsAlreadyExists(err) {
		t.Errorf("a second WritePlanKey = %v, want AlreadyExists", err)
	}

	s.Data[records.PlanKeyData] = []byte("short")
	if err := env.Client.Update(ctx, s); err != nil {
		t.Fatal(err)
	}
	if _, err := k.ReadPlanKey(ctx, tc, kind); err == nil || !strings.Contains(err.Error(), "delete it and CAPTF makes a new one") {
		t.Errorf("a short key: ReadPlanKey = %v, want an error saying to delete it", err)
	}

	s.Labels[infrav1.RetainedFromUIDLabel] = "5d0c2a1e"
	if err := env.Client.Update(ctx, s); err != nil {
		t.Fatal(err)
	}
	if err := k.DeletePlanKey(ctx, tc, kind); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(s), s); err != nil {
		t.Fatalf("a plan key retained with the state was deleted: %v", err)
	}
	delete(s.Labels, infrav1.RetainedFromUIDLabel)
	if err := env.Client.Update(ctx, s); err != nil {
		t.Fatal(err)
	}
	if err := k.DeletePlanKey(ctx, tc, kind); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(s), s); !apierrors.IsNotFound(err) {
		t.Errorf("the plan key is still there after DeletePlanKey (%v): finalizers %v", err, s.Finalizers)
	}
}

// TestTheStateAJobWroteIsClaimed: after an apply, the base state Secret
// carries the inputs hash of the apply and every piece the object's owner
// reference and protection; claiming again changes nothing; a restore of
// unknown inputs removes the hash.
func TestTheStateAJobWroteIsClaimed(t *testing.T) {
	envtest.Require(t, env)
	ctx := t.Context()
	k := Keeper{Client: env.Client, Reader: env.Client}
	const kind = "TerraformCluster"
	tc := cluster(t, "claim")
	suffix := suffixOf(t, tc)
	for _, name := range []string{state.SecretName(suffix), state.SecretName(suffix) + "-part-1"} {
		piece := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: tc.Namespace, Name: name,
			Labels: state.PieceLabels(suffix)}}
		if err := env.Client.Create(ctx, piece); err != nil {
			t.Fatal(err)
		}
	}
	pieces := func() []corev1.Secret {
		t.Helper()
		var l corev1.SecretList
		if err := env.Client.List(ctx, &l, client.InNamespace(tc.Namespace), client.MatchingLabelsSelector{Selector: state.Selector(suffix)}); err != nil {
			t.Fatal(err)
		}
		return l.Items
	}
	hashOf := func() string {
		for _, s := range pieces() {
			if s.Name == state.SecretName(suffix) {
				return s.Annotations[infrav1.InputsHashAnnotation]
			}
		}
		t.Fatal("no base state Secret")
		return ""
	}
	if hashed, err := k.ClaimState(ctx, tc, kind, suffix, "h3:abc", false); err != nil || !hashed {
		t.Fatalf("ClaimState = %v, %v; want the hash set", hashed, err)
	}
	if got := hashOf(); got != "h3:abc" {
		t.Errorf("the base state Secret's inputs hash is %q, want h3:abc", got)
	}
	for _, s := range pieces() {
		if !HasOwner(&s, tc) || !protection.Protected(&s) {
			t.Errorf("state piece %s is not owned by the object and protected", s.Name)
		}
	}
	if hashed, err := k.ClaimState(ctx, tc, kind, suffix, "h3:abc", false); err != nil || hashed {
		t.Errorf("claiming again = %v, %v; want nothing new", hashed, err)
	}
	if hashed, err := k.ClaimState(ctx, tc, kind, suffix, "", false); err != nil || hashed || hashOf() != "h3:abc" {
		t.Errorf("an apply of unknown inputs = %v, %v, hash %q; want the hash kept", hashed, err, hashOf())
	}
	if hashed, err := k.ClaimState(ctx, tc, kind, suffix, "", true); err != nil || hashed || hashOf() != "" {
		t.Errorf("a restore of unknown inputs = %v, %v, hash %q; want the hash removed", hashed, err, hashOf())
	}
	for _, s := range pieces() {
		if protection.Unprotect(&s) {
			_ = env.Client.Update(ctx, &s)
		}
	}
}

// TestReleaseState: released on state another object retained, an object
// deletes only its plan key; released on its own state, it deletes every
// state piece, the lock and its input records too, protected or not.
func TestReleaseState(t *testing.T) {
	envtest.Require(t, env)
	ctx := t.Context()
	k := Keeper{Client: env.Client, Reader: env.Client}
	const kind = "TerraformCluster"
	tc := cluster(t, "release")
	suffix := suffixOf(t, tc)
	secret := func(name string, labels map[string]string) client.Object {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: tc.Namespace, Name: name, Labels: labels, Finalizers: []string{protection.Finalizer}}}
	}
	pieceLabels := state.PieceLabels(suffix)
	stateKept := []client.Object{
		secret(state.SecretName(suffix), pieceLabels),
		secret(state.SecretName(suffix)+"-part-1", pieceLabels),
		secret(records.AttemptName(kind, tc.Name), nil),
		secret(records.AppliedName(kind, tc.Name), nil),
		&coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: tc.Namespace, Name: state.LockLeaseName(suffix)}},
	}
	planKey := secret(records.PlanKeyName(kind, tc.Name), nil)
	for _, obj := range append(slices.Clone(stateKept), planKey) {
		if err := env.Client.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	gone := func(obj client.Object) bool {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj.DeepCopyObject().(client.Object))
		if err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		return apierrors.IsNotFound(err)
	}

	if err := k.ReleaseState(ctx, tc, kind, suffix, false); err != nil {
		t.Fatal(err)
	}
	if !gone(planKey) {
		t.Error("the plan key is left after the release")
	}
	for _, obj := range stateKept {
		if gone(obj) {
			t.Errorf("%s went with an object released on state it does not own", obj.GetName())
		}
	}

	if err := k.ReleaseState(ctx, tc, kind, suffix, true); err != nil {
		t.Fatal(err)
	}
	for _, obj := range stateKept {
		if !gone(obj) {
			t.Errorf("%s is left after the release of the object's own state", obj.GetName())
		}
	}
}

// TestUnkeptRecords: of an object's inputs records and plan key, read
// live, those that lack its owner reference or protection are returned;
// kept ones, missing ones and ones retained for another object are not.
func TestUnkeptRecords(t *testing.T) {
	envtest.Require(t, env)
	ctx := t.Context()
	k := Keeper{Client: env.Client, Reader: env.Client}
	const kind = "TerraformCluster"
	tc := cluster(t, "unkept")
	owned := []metav1.OwnerReference{{APIVersion: infrav1.GroupVersion.String(), Kind: kind, Name: tc.Name, UID: tc.UID}}
	for _, s := range []*corev1.Secret{
		{ObjectMeta: metav1.ObjectMeta{Name: records.AttemptName(kind, tc.Name)}},
		{ObjectMeta: metav1.ObjectMeta{Name: records.AppliedName(kind, tc.Name), OwnerReferences: owned, Finalizers: []string{protection.Finalizer}}},
		{ObjectMeta: metav1.ObjectMeta{Name: records.PlanKeyName(kind, tc.Name), Labels: map[string]string{infrav1.RetainedFromUIDLabel: "old-uid"}}},
	} {
		s.Namespace = tc.Namespace
		if err := env.Client.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	unkept, err := k.UnkeptRecords(ctx, tc, kind)
	if err != nil {
		t.Fatal(err)
	}
	if len(unkept) != 1 || unkept[0].Name != records.AttemptName(kind, tc.Name) {
		var names []string
		for _, s := range unkept {
			names = append(names, s.Name)
		}
		t.Errorf("UnkeptRecords = %v, want the attempt record only", names)
	}
	applied := &corev1.Secret{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: tc.Namespace, Name: records.AppliedName(kind, tc.Name)}, applied); err == nil && protection.Unprotect(applied) {
		_ = env.Client.Update(ctx, applied)
	}
}

// TestTakeBackup: a state read by its metadata only is read again with
// its data and backed up once, owned by the object and protected; the
// same serial is not backed up twice; a state whose pieces changed since
// it was read is left to the next pass; pruning keeps the newest complete
// sets and the one a restore request names.
func TestTakeBackup(t *testing.T) {
	envtest.Require(t, env)
	ctx := t.Context()
	k := Keeper{Client: env.Client, Reader: env.Client}
	tc := cluster(t, "backup")
	suffix := suffixOf(t, tc)
	for i, data := range []string{"first", "second"} {
		piece := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: tc.Namespace, Name: state.ChunkName(suffix, i), Labels: state.PieceLabels(suffix)},
			Data: map[string][]byte{state.DataKey: []byte(data)}}
		if err := env.Client.Create(ctx, piece); err != nil {
			t.Fatal(err)
		}
	}
	metas := func() []corev1.Secret {
		t.Helper()
		list := state.SecretMetadataList()
		if err := env.Client.List(ctx, list, client.InNamespace(tc.Namespace), client.MatchingLabelsSelector{Selector: state.Selector(suffix)}); err != nil {
			t.Fatal(err)
		}
		return state.MetadataOnly(list.Items)
	}
	backups := func() []state.Backup {
		t.Helper()
		secrets, err := k.ListBackups(ctx, tc.Namespace, suffix)
		if err != nil {
			t.Fatal(err)
		}
		return state.Backups(secrets)
	}
	request := func(serial int64) BackupRequest {
		read := metas()
		st := &state.State{Serial: serial, Lineage: "l-1", Fingerprint: state.Fingerprint(read),
			Secrets: []state.SecretRef{{Name: state.ChunkName(suffix, 0)}, {Name: state.ChunkName(suffix, 1)}}}
		return BackupRequest{Kind: "TerraformCluster", Suffix: suffix, State: st, Secrets: read, InputsHash: "h3:in", SourceJob: "c-apply-a1", Now: time.Now()}
	}

	name, pieces, secrets, err := k.TakeBackup(ctx, tc, request(7), backups())
	if err != nil || name == "" || pieces != 2 || len(secrets) != 2 || string(secrets[0].Data[state.DataKey]) == "" {
		t.Fatalf("TakeBackup = %q, %d pieces, %d Secrets read, %v; want a set written from the state read again with its data", name, pieces, len(secrets), err)
	}
	sets := backups()
	if len(sets) != 1 || !sets[0].Complete || sets[0].Serial != 7 || sets[0].InputsHash != "h3:in" {
		t.Fatalf("the backup sets are %+v; want one complete set of serial 7 with the state's inputs hash", sets)
	}
	head := &corev1.Secret{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: tc.Namespace, Name: sets[0].Chunks[0]}, head); err != nil || !HasOwner(head, tc) || !protection.Protected(head) {
		t.Errorf("the backup Secret is not owned by the object and protected (%v)", err)
	}
	if head.Annotations[infrav1.StateBackupSourceJobAnnotation] != "c-apply-a1" || head.Labels[infrav1.OwnerNameLabel] != tc.Name || head.Labels[infrav1.OwnerKindLabel] != "TerraformCluster" {
		t.Errorf("the backup Secret names source Job %q and owner labels %v; want c-apply-a1 and the object's", head.Annotations[infrav1.StateBackupSourceJobAnnotation], head.Labels)
	}
	if name, _, secrets, err := k.TakeBackup(ctx, tc, request(7), sets); err != nil || name != "" || len(secrets) != 2 {
		t.Errorf("backing up serial 7 again = %q, %d Secrets read, %v; want nothing written, the pieces read again returned", name, len(secrets), err)
	}
	// A state read with its data is not read again.
	withData := request(7)
	withData.Secrets, withData.WithData = secrets, true
	if name, _, again, err := k.TakeBackup(ctx, tc, withData, sets); err != nil || name != "" || again != nil {
		t.Errorf("backing up serial 7 read with its data = %q, %d Secrets read again, %v; want nothing written or read", name, len(again), err)
	}

	moved := request(8)
	piece := &corev1.Secret{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: tc.Namespace, Name: state.ChunkName(suffix, 1)}, piece); err != nil {
		t.Fatal(err)
	}
	piece.Data[state.DataKey] = []byte("rewritten")
	if err := env.Client.Update(ctx, piece); err != nil {
		t.Fatal(err)
	}
	if name, _, secrets, err := k.TakeBackup(ctx, tc, moved, sets); err != nil || name != "" || secrets != nil {
		t.Errorf("backing up a state that moved on = %q, %d Secrets, %v; want nothing written or read for it", name, len(secrets), err)
	}

	for serial := int64(8); serial <= 9; serial++ {
		if _, _, _, err := k.TakeBackup(ctx, tc, request(serial), backups()); err != nil {
			t.Fatal(err)
		}
	}
	listed, err := k.ListBackups(ctx, tc.Namespace, suffix)
	if err != nil {
		t.Fatal(err)
	}
	kept, pruned, err := k.PruneBackups(ctx, state.Backups(listed), 1, "7", listed)
	if err != nil || pruned != 1 || len(kept) != 2 {
		t.Fatalf("PruneBackups(keep 1, pinned 7) = %d kept, %d pruned, %v; want serial 9 and the pinned 7 kept, 8 pruned", len(kept), pruned, err)
	}
	var serials []int64
	for _, b := range backups() {
		serials = append(serials, b.Serial)
	}
	if !slices.Equal(serials, []int64{9, 7}) {
		t.Errorf("after pruning the sets are of serials %v, want [9 7]", serials)
	}
}
