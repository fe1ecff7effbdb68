package model

import (
	"math/rand/v2"
	"testing"
)

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

// TestRecorderTimesAddUp feeds the recorder what a thread's events can
// look like when they come from two clocks read on different CPUs: times
// that go back a little, holds that begin before the last event the
// tracer drained, in-flight frames timed inside a hold. Whatever the
// order, no self time is negative, none exceeds the traced time, and the
// self times add up to the traced time exactly, in snapshots too (a sum
// off by microseconds made 1 recording in 12-20 of a threaded program
// unreadable).
func TestRecorderTimesAddUp(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	check := func(run int, what string, nodes []Node, traced int64) {
		t.Helper()
		var self int64
		for i, n := range nodes {
			if n.SelfNs < 0 || n.TotalNs < 0 || n.TotalNs > traced {
				t.Fatalf("run %d %s: node %d self %d total %d, traced %d", run, what, i, n.SelfNs, n.TotalNs, traced)
			}
			self += n.SelfNs
		}
		if self != traced {
			t.Fatalf("run %d %s: self times add up to %d, traced %d", run, what, self, traced)
		}
	}
	for run := range 2000 {
		r := NewRecorder(rng.Int64N(1000))
		now := int64(1000)
		// A time near now: up to 300 ns back (clocks of two CPUs), or on.
		stamp := func() int64 {
			now += rng.Int64N(2000)
			return now - rng.Int64N(300)
		}
		for range rng.IntN(200) {
			switch k := rng.IntN(10); {
			case k < 4:
				r.Enter(1+rng.IntN(4), stamp(), KindDirect)
			case k < 8:
				r.Exit(stamp())
			case k == 8:
				if r.Depth() == 0 || rng.IntN(2) == 0 {
					r.EnterInFlight(1+rng.IntN(4), stamp())
				}
			default:
				from := stamp() - rng.Int64N(3000)
				to := from + rng.Int64N(5000)
				r.Hold(from, to)
				now = max(now, to)
			}
			if rng.IntN(50) == 0 {
				nodes, traced := r.Snapshot(stamp())
				check(run, "snapshot", nodes, traced)
			}
		}
		nodes, traced := r.Finish(stamp() - 500)
		check(run, "finish", nodes, traced)
	}
}

// TestEnterVia: a call made by a counted function (no activations) goes
// below that function's context, which has no calls and gets the call's
// time as its total; a via that is the innermost open function itself, or
// None, is a plain Enter.
func TestEnterVia(t *testing.T) {
	type node struct {
		path         string // functions from the root's child down, as digits
		calls, total int64
	}
	for _, tc := range []struct {
		name string
		via  int
		want []node
	}{
		{"counted caller", 3, []node{{"1", 1, 100}, {"13", 0, 20}, {"132", 1, 20}}},
		{"no caller", None, []node{{"1", 1, 100}, {"12", 1, 20}}},
		{"the open function", 1, []node{{"1", 1, 100}, {"12", 1, 20}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewRecorder(0)
			r.Enter(1, 0, KindDirect)
			r.EnterVia(tc.via, 2, 10, KindDirect)
			r.Exit(30)
			r.Exit(100)
			nodes, _ := r.Finish(100)
			var got []node
			for i, n := range nodes[1:] {
				path := ""
				for k := i + 1; k > 0; k = nodes[k].Parent {
					path = string(rune('0'+nodes[k].Func)) + path
				}
				got = append(got, node{path, n.Calls, n.TotalNs})
			}
			if len(got) != len(tc.want) {
				t.Fatalf("nodes %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("nodes %v, want %v", got, tc.want)
				}
			}
		})
	}
}
