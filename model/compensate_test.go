package model_test

import (
	"testing"

	"github.com/profile-dev/profile/model"
	"github.com/profile-dev/profile/model/modeltest"
)

// traced is what a probe makes of a script: each call spends out in its
// caller before the entry's clock read and in inside the callee before
// the return's.
func traced(script []modeltest.Step, cost map[string]model.ProbeCost) []modeltest.Step {
	out := make([]modeltest.Step, 0, len(script))
	var open []string
	for _, s := range script {
		if s.Func != "" {
			s.Dt += cost[s.Func].OutNs
			open = append(open, s.Func)
		} else {
			s.Dt += cost[open[len(open)-1]].InNs
			open = open[:len(open)-1]
		}
		out = append(out, s)
	}
	return out
}

func build(script []modeltest.Step) *model.Profile {
	b := modeltest.NewBuilder("/bin/app")
	p := b.Process(100, model.None, "", 0)
	b.Thread(p, 100, 0, "", 0, nil, script)
	return b.P
}

// TestCompensateTakesOutExactlyWhatTheProbesAdded: a script traced with
// known costs per call, compensated, gives the script's own times, node
// by node, recursion and a costlier library probe included.
func TestCompensateTakesOutExactlyWhatTheProbesAdded(t *testing.T) {
	E, X := modeltest.Enter, modeltest.Exit
	cost := map[string]model.ProbeCost{
		"main": {InNs: 7, OutNs: 3}, "work": {InNs: 7, OutNs: 3}, "fib": {InNs: 7, OutNs: 3},
		"libc.so:read": {InNs: 900, OutNs: 800},
	}
	for _, tc := range []struct {
		name   string
		script []modeltest.Step
	}{
		{"flat", []modeltest.Step{E(10, "main"), E(5, "work"), X(20), E(5, "work"), X(30), X(10)}},
		{"recursive", []modeltest.Step{E(10, "main"), E(5, "fib"), E(5, "fib"), E(5, "fib"), X(9), X(8), E(1, "work"), X(4), X(7), X(10)}},
		{"mutual", []modeltest.Step{E(10, "main"), E(5, "work"), E(5, "fib"), E(5, "work"), X(9), X(8), X(7), X(10)}},
		{"library", []modeltest.Step{E(10, "main"), E(5, "work"), E(2, "libc.so:read"), X(5000), X(3), E(2, "libc.so:read"), X(70), X(10)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := build(tc.script)
			raw := build(traced(tc.script, cost))
			costs := make([]model.ProbeCost, len(raw.Functions))
			for i := range raw.Functions {
				costs[i] = cost[raw.FuncName(i)]
			}
			before := raw.Threads[0].TracedNs
			got, taken := model.Compensate(raw, costs)
			if err := got.Validate(); err != nil {
				t.Fatal(err)
			}
			if raw.Threads[0].TracedNs != before {
				t.Fatal("Compensate changed its input")
			}
			g, w := got.Threads[0], want.Threads[0]
			if g.TracedNs != w.TracedNs || taken != before-w.TracedNs {
				t.Fatalf("traced %d ns (took %d), want %d (took %d)", g.TracedNs, taken, w.TracedNs, before-w.TracedNs)
			}
			for i := range w.Nodes {
				gn, wn := g.Nodes[i], w.Nodes[i]
				if gn.SelfNs != wn.SelfNs || gn.TotalNs != wn.TotalNs || gn.Calls != wn.Calls {
					t.Errorf("node %d (%s): self %d total %d, want self %d total %d", i,
						got.FuncName(gn.Func), gn.SelfNs, gn.TotalNs, wn.SelfNs, wn.TotalNs)
				}
			}
		})
	}
}

// TestCompensateNeverGoesNegative: costs larger than what was measured
// (a noisy calibration) clamp at zero and the profile stays valid.
func TestCompensateNeverGoesNegative(t *testing.T) {
	E, X := modeltest.Enter, modeltest.Exit
	raw := build([]modeltest.Step{E(10, "main"), E(5, "work"), X(20), E(5, "work"), X(30), X(10)})
	costs := make([]model.ProbeCost, len(raw.Functions))
	for i := range costs {
		costs[i] = model.ProbeCost{InNs: 1000, OutNs: 1000}
	}
	got, taken := model.Compensate(raw, costs)
	if err := got.Validate(); err != nil {
		t.Fatal(err)
	}
	if got.Threads[0].TracedNs != 0 || taken != raw.Threads[0].TracedNs {
		t.Fatalf("traced %d ns after taking %d of %d", got.Threads[0].TracedNs, taken, raw.Threads[0].TracedNs)
	}
}

// TestCompensateLeavesCompositeThreads: a merged thread's member
// contributions would no longer add up; it is left alone.
func TestCompensateLeavesCompositeThreads(t *testing.T) {
	p := modeltest.SampleComposite()
	costs := make([]model.ProbeCost, len(p.Functions))
	for i := range costs {
		costs[i] = model.ProbeCost{InNs: 1, OutNs: 1}
	}
	got, _ := model.Compensate(p, costs)
	if err := got.Validate(); err != nil {
		t.Fatal(err)
	}
	for i := range p.Threads {
		if len(p.Threads[i].Members) > 0 && got.Threads[i].TracedNs != p.Threads[i].TracedNs {
			t.Errorf("composite thread %d changed", i)
		}
	}
}
