package records

// ForDestroy picks the record a destroy renders, and the refresh or drift
// of a kind whose inputs are never re-rendered (TerraformMachine), from the
// attempt and applied records (nil when absent) and the inputs hash the
// state carries ("" when it carries none). First match wins:
//
//  1. the attempt record, when it names another Job than the applied
//     record (or there is no applied record) and carries
//     captf.io/may-have-applied: a failed apply may have changed
//     resources with its own inputs, which the record keeps until an apply
//     is confirmed (later attempts never overwrite them; see evidence.go);
//  2. when the state has an inputs hash, the record carrying that hash,
//     the applied record first;
//  3. the applied record, else the attempt record;
//  4. no record: nil (a mutable kind then renders its current inputs; an
//     immutable one cannot destroy).
//
// mismatch reports that the picked record's hash differs from the state's
// (the caller emits the Warning DestroyInputsMismatch naming the record's
// Job and both hashes). A state without an inputs hash never mismatches:
// there is nothing to compare.
//
// So a blocked, held or failed-before-apply change never alters what a
// destroy renders, a partly failed apply is destroyed with its own inputs,
// and reverting a typo fixes a stuck destroy.
func ForDestroy(attempt, applied *Record, stateHash string) (rec *Record, mismatch bool) {
	rec = pick(attempt, applied, stateHash)
	return rec, rec != nil && stateHash != "" && rec.InputsHash != stateHash
}

func pick(attempt, applied *Record, stateHash string) *Record {
	if attempt != nil && attempt.MayHaveApplied && (applied == nil || attempt.Job != applied.Job) {
		return attempt
	}
	if stateHash != "" {
		for _, r := range []*Record{applied, attempt} {
			if r != nil && r.InputsHash == stateHash {
				return r
			}
		}
	}
	if applied != nil {
		return applied
	}
	return attempt
}

// Rendered picks the inputs a destroy (destroy), refresh or drift renders:
// a mutable kind's current inputs (current, nil when they do not build)
// for a refresh or drift; else the record ForDestroy picks of attempt and
// applied, with its mismatch against the state's inputs hash; without
// one, a mutable kind's current inputs again. nil: nothing renders it (an
// immutable kind without a record).
func Rendered(destroy, mutable bool, current, attempt, applied *Record, stateHash string) (rec *Record, mismatch bool) {
	if mutable && current != nil && !destroy {
		return current, false
	}
	rec, mismatch = ForDestroy(attempt, applied, stateHash)
	if rec == nil && mutable && current != nil {
		return current, false // no record: a mutable kind renders its current inputs
	}
	return rec, mismatch
}
