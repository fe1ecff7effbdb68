package attach

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/profile-dev/profile/model"
)

// TestCalibrateMeasuresEachProbeKind: the kinds asked for and only them;
// an inline call costs less than a trap's two stops.
func TestCalibrateMeasuresEachProbeKind(t *testing.T) {
	cal, err := Calibrate(context.Background(), ProbesInline, ProbesTrap)
	if err != nil {
		t.Fatal(err)
	}
	in, trap := cal.Inline, cal.Trap
	if in.InNs <= 0 || in.OutNs <= 0 || trap.InNs <= 0 || trap.OutNs <= 0 || cal.Host == "" {
		t.Fatalf("calibration %+v: every cost measured, on a named host", cal)
	}
	if in.InNs+in.OutNs >= trap.InNs+trap.OutNs {
		t.Fatalf("an inline call (%+v) costs no less than a trap call (%+v)", in, trap)
	}
	cal, err = Calibrate(context.Background(), ProbesInline)
	if err != nil {
		t.Fatal(err)
	}
	if cal.Inline.InNs <= 0 || cal.Trap != (model.ProbeCost{}) {
		t.Fatalf("inline asked for: calibration %+v, want inline only", cal)
	}
}

// TestCompensationMatchesTheWorkloadsOwnShare is issue #11's acceptance
// of overhead compensation: a tiny function's self share, traced with
// compensation, is within 5 points of the share the workload measures
// itself untraced (clock_gettime). Two workloads: 1,000 tiny calls then a
// 1 ms sleep (about 0.6%), and a busy loop where the tiny function is a
// third of the time. Inline probes (the default). A pair of runs (untraced,
// traced) is tried up to 5 times: on a loaded machine preemption moves
// even the untraced share by 5-15 points (make test runs one package at a
// time for this; a second apart, as a busy neighbour on the host can
// inflate the calibration for a second or more), while a compensation
// that is off fails every try (the busy loop
// read 17-25% for 33% before the stubs' fix). Not asserted: trap probes,
// whose cost per call changes 2-3x from run to run on a virtual machine.
func TestCompensationMatchesTheWorkloadsOwnShare(t *testing.T) {
	for _, c := range []struct {
		name  string
		args  []string
		scope string // work's share is of this function's total
	}{
		{"sleep", []string{"sleep", "--rounds", "300"}, "sleepy"},
		{"busy", []string{"busy", "--rounds", "3"}, "with_calls"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got, want float64
			for try := 1; try <= 5; try++ {
				if try > 1 {
					time.Sleep(time.Second) // past a neighbour's burst
				}
				got, want = compensatedShare(t, c.args, c.scope)
				if math.Abs(got-want) <= 0.05 {
					return
				}
			}
			t.Fatalf("work is %.2f%% of %s, the workload measures %.2f%% untraced: more than 5 points apart (5 tries)", 100*got, c.scope, 100*want)
		})
	}
}

// compensatedShare runs the overhead workload untraced and traced with
// compensation: work's self share of scope's total traced, and the share
// the workload measured untraced.
func compensatedShare(t *testing.T, args []string, scope string) (got, want float64) {
	t.Helper()
	out, _ := untraced(t, "overhead", args...)
	if _, err := fmt.Sscanf(out, "share %f", &want); err != nil {
		t.Fatalf("workload said %q: %v", out, err)
	}
	opt := defaultOptions(t)
	opt.Probes, opt.Compensate = ProbesInline, true
	r, _ := recordWorkload(t, "overhead", opt, args...)
	cal := r.Profile.Meta.Calibration
	if cal == nil || !cal.Compensated || cal.SubtractedNs <= 0 {
		t.Fatalf("calibration %+v: want the probes' cost taken out", cal)
	}
	work, total := funcTimes(r.Profile, "work"), funcTimes(r.Profile, scope)
	got = float64(work.self) / float64(total.total)
	t.Logf("work: %.2f%% of %s traced with compensation, %.2f%% untraced (calibration %+v; ring stalls %d, %v)",
		100*got, scope, 100*want, *cal, r.Stats.Stalls, time.Duration(r.Stats.StallNs))
	return got, want
}

type times struct{ self, total int64 }

// funcTimes sums a function's self and total times over its nodes.
func funcTimes(p *model.Profile, name string) times {
	var s times
	for _, th := range p.Threads {
		for _, n := range th.Nodes {
			if p.FuncName(n.Func) == name {
				s.self += n.SelfNs
				s.total += n.TotalNs
			}
		}
	}
	return s
}
