package workspace

import (
	"testing"

	"captf.io/captf/internal/conditions"
	"captf.io/captf/internal/decide"
)

// TestEveryClusterGateWaitIsReported: each wait the cluster operation gate
// returns (gates.Keeper.ClusterGate) is an obstacle that reports the
// gate's reason on the operation's condition and is announced; a reason
// missing from gateObstacle would start nothing and report nothing.
func TestEveryClusterGateWaitIsReported(t *testing.T) {
	for reason, o := range gateObstacle {
		w := decide.Stopped(decide.Decision{Action: decide.ActionStartJob, Op: decide.OpApply}, o, "6f1c")
		got := conditions.Wait(w, conditions.WaitFacts{Message: "the gate's message"})
		if len(got) != 1 || got[0].Reason != reason || got[0].Message != "the gate's message" || !o.Announced() {
			t.Errorf("the gate's %s: reports %+v (announced %v), want it on the apply's condition, announced", reason, got, o.Announced())
		}
	}
}
