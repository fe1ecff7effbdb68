package model

import "testing"

// TestHoldTakesTheTracersTimeOutOfTheInnermostActivation: a hold while
// main runs comes off main's self time only; a frame entered during the
// hold (an in-flight frame rebuilt at attach) is timed from its end; a
// hold before anything opened comes off START.
func TestHoldTakesTheTracersTimeOutOfTheInnermostActivation(t *testing.T) {
	for _, tc := range []struct {
		name                string
		run                 func(r *Recorder)
		startSelf, mainSelf int64
		mainTotal, traced   int64
	}{
		{"inside main", func(r *Recorder) {
			r.Enter(1, 10, KindDirect)
			r.Enter(2, 20, KindDirect)
			r.Exit(30)
			r.Hold(40, 140) // 100 ns held
			r.Exit(150)
		}, 10 + 50, 140 - 10 - 100, 140 - 100, 200 - 100},
		{"before anything", func(r *Recorder) {
			r.Hold(0, 60)
			r.Enter(1, 70, KindDirect)
			r.Exit(150)
		}, 70 + 50 - 60, 80, 80, 200 - 60},
		{"entered during the hold", func(r *Recorder) {
			r.EnterInFlight(1, 30)
			r.Hold(0, 60)
			r.Exit(150)
		}, 50, 90, 90, 200 - 60},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewRecorder(0)
			tc.run(r)
			nodes, traced := r.Finish(200)
			if nodes[0].SelfNs != tc.startSelf || nodes[1].SelfNs != tc.mainSelf || nodes[1].TotalNs != tc.mainTotal || traced != tc.traced {
				t.Fatalf("START self %d, main self %d total %d, traced %d; want %d, %d, %d, %d",
					nodes[0].SelfNs, nodes[1].SelfNs, nodes[1].TotalNs, traced, tc.startSelf, tc.mainSelf, tc.mainTotal, tc.traced)
			}
			var self int64
			for _, n := range nodes {
				self += n.SelfNs
			}
			if self != traced {
				t.Fatalf("self times add up to %d, traced %d", self, traced)
			}
		})
	}
}
