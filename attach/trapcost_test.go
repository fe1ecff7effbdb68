package attach

import (
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/profile-dev/profile/instrument"
)

// A trap-probed function tail-called by an inline-probed one finds the
// return stub as its return address: the stub's exit event closes it, and
// no breakpoint goes there (one did, and every inline-probed return of
// the process stopped: a Rust program's 40,000 calls took 39,000 stops
// and ran 15x slower than with a breakpoint-free run). trapcost calls
// tail_to_loop -> loop_head 1,000 times among 20,000 inline-probed calls:
// the stops are loop_head's own two per call, not one per inline return.
func TestTailCallIntoATrapProbeStopsOnlyThere(t *testing.T) {
	opt := defaultOptions(t)
	opt.Probes = ProbesAuto
	r, out := recordWorkload(t, "trapcost", opt, "10000", "10")
	for fn, kind := range map[string]string{"loop_head": ProbesTrap, "tail_to_loop": ProbesInline, "leaf": ProbesInline, "step": ProbesInline} {
		if got := probeOf(r.Profile, fn); got != kind {
			t.Errorf("%s got probe %q, want %q", fn, got, kind)
		}
	}
	checkExpected(t, "trapcost", r)
	if want, _ := untraced(t, "trapcost", "10000", "10"); resultOf(out) != resultOf(want) {
		t.Errorf("stdout %q, untraced %q", out, want)
	}
	// Two per loop_head call, and a few for set-up (the program's entry,
	// the dynamic linker's hook, thread and exit events).
	if max := int64(2*1000 + 50); r.Stats.Stops > max {
		t.Errorf("%d stops for 1,000 trap-probed calls among 21,000 (want at most %d)", r.Stats.Stops, max)
	}
}

// resultOf is the result=... field of a workload's output line.
func resultOf(out string) string {
	return regexp.MustCompile(`result=\S+`).FindString(out)
}

// Trap probes' stops are taken out of the times one by one, where each
// lands: a function traced by breakpoints alone, called 10,000 times,
// gets its 20,000 stops counted and taken out, and its compensated self
// time stays between zero and the program's own clock around each call
// (which includes both stops whole). How close it comes
// to the inline-probed time is a relation of a quiet machine: `make
// bench` measures it (docs/benchmarks.md, Compensation against the truth).
func TestTrapStopsTakenOutOfTheTimes(t *testing.T) {
	f, err := instrument.NewFilter([]string{`^trapcost:step$`}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	opt := Options{Filter: f, Probes: ProbesTrap, Compensate: true}
	PrepareCompensation(t.Context(), &opt)
	r, out := recordWorkload(t, "trapcost", opt)
	cal := r.Profile.Meta.Calibration
	if cal == nil || !cal.Compensated || cal.Stops != 20000 || cal.StopNs <= 0 {
		t.Fatalf("calibration %+v: want the 20,000 stops of step's 10,000 calls taken out", cal)
	}
	var own int64
	if _, err := fmt.Sscanf(regexp.MustCompile(`step_ns=\d+`).FindString(out), "step_ns=%d", &own); err != nil || own <= 0 {
		t.Fatalf("trapcost said %q: no step_ns", out)
	}
	self := funcTimes(r.Profile, "step").self
	if self >= own {
		t.Errorf("step's compensated self time %v, the program's own clock %v: its stops were not taken out", time.Duration(self), time.Duration(own))
	}
	if self <= 0 {
		t.Errorf("step's compensated self time %v: more than its stops came off", time.Duration(self))
	}
	t.Logf("step: %v compensated self time, %v by its own clock, %d stops, %v taken out", time.Duration(self), time.Duration(own), cal.Stops, time.Duration(cal.StopNs))
}
