package attach

import (
	"testing"

	"github.com/profile-dev/profile/instrument"
	"github.com/profile-dev/profile/internal/workload"
	"github.com/profile-dev/profile/model"
)

// hottrap under --probes auto: spin and rare can take no inline probe.
// spin, called 5,000 times in a row, has its trap probe taken out at its
// hotCalls-th call: its count is exact up to then and the profile says
// when. rare's return site is where join's other path lands, passed by all
// 100,000 join calls: after strayLimit passages it is in the text only
// while a rare call is to return there, so the stops are spin's and rare's
// own two a call (and the strays), not one per join call.
func TestHotTrapProbeTakenOut(t *testing.T) {
	opt := defaultOptions(t)
	opt.Probes = ProbesAuto
	r, out := recordWorkload(t, "hottrap", opt)
	for fn, kind := range map[string]string{"spin": ProbesTrap, "rare": ProbesTrap, "join": ProbesInline, "main": ProbesInline} {
		if got := probeOf(r.Profile, fn); got != kind {
			t.Errorf("%s got probe %q, want %q", fn, got, kind)
		}
	}
	want, err := workload.LoadExpected("hottrap")
	if err != nil {
		t.Fatal(err)
	}
	want.Functions["spin"] = workload.Counts{Calls: hotCalls}
	compareExpected(t, want, r.Profile)
	p := r.Profile
	for f, fn := range p.Functions {
		switch name := p.FuncName(f); {
		case name == "spin" && (fn.TracedUntilNs <= 0 || fn.Probe != model.ProbeTrap):
			t.Errorf("spin: traced until %d ns, probe %v: want its probe's end recorded", fn.TracedUntilNs, fn.Probe)
		case name != "spin" && fn.TracedUntilNs != 0:
			t.Errorf("%s: traced until %d ns, want to the end", name, fn.TracedUntilNs)
		}
	}
	if r.Stats.Probes.Demoted != 1 {
		t.Errorf("%d trap probes taken out, want 1 (spin)", r.Stats.Probes.Demoted)
	}
	if wantOut, _ := untraced(t, "hottrap"); out != wantOut {
		t.Errorf("stdout %q, untraced %q", out, wantOut)
	}
	// spin's two a call until taken out, rare's 98 calls' two each, the
	// strays before rare's return site turned transient, and a few for
	// set-up (the program's entry, the dynamic linker's hook, exit).
	if max := int64(2*hotCalls + 2*98 + strayLimit + 50); r.Stats.Stops > max {
		t.Errorf("%d stops, want at most %d (join's 100,000 calls pass rare's return site)", r.Stats.Stops, max)
	}
}

// Under --probes trap nothing is taken out (the user asked for every
// call), but a return site other paths pass still leaves the text between
// the calls that return there: join's 10,000 calls cost their own two
// stops each, not a third at rare's return site.
func TestTrapReturnSiteTransient(t *testing.T) {
	opt := defaultOptions(t)
	opt.Probes = ProbesTrap
	r, out := recordWorkload(t, "hottrap", opt, "2000", "10000")
	want, err := workload.SelfCheck("hottrap", "2000", "10000")
	if err != nil {
		t.Fatal(err)
	}
	compareExpected(t, want, r.Profile)
	if r.Stats.Probes.Demoted != 0 {
		t.Errorf("%d trap probes taken out under --probes trap, want 0", r.Stats.Probes.Demoted)
	}
	if wantOut, _ := untraced(t, "hottrap", "2000", "10000"); out != wantOut {
		t.Errorf("stdout %q, untraced %q", out, wantOut)
	}
	// main, spin x 2,000, join x 10,000, rare x 10: two stops a call.
	calls := int64(1 + 2000 + 10000 + 10)
	if max := 2*calls + strayLimit + 50; r.Stats.Stops > max {
		t.Errorf("%d stops for %d calls, want at most %d", r.Stats.Stops, calls, max)
	}
}

// A function that returns twice takes the counting probe, which replaces
// no return address (a timed inline probe's replaced one would meet the
// second return long gone): hottrap calls libc's setjmp 3,000 times,
// longjmp'ing back into every other one, and the C library's start-up
// once more (3,001 calls: gdb's breakpoint on _setjmp is hit as often);
// each call is counted, exactly, with no stop, and the program's output
// is the untraced one.
func TestHotSetjmpCounted(t *testing.T) {
	f, err := instrument.NewFilter([]string{`^hottrap:`, `^libc\.so\.6:_setjmp$`}, nil, []string{"libc.so.6"})
	if err != nil {
		t.Fatal(err)
	}
	opt := Options{Filter: f, Probes: ProbesAuto}
	r, out := recordWorkload(t, "hottrap", opt, "0", "0", "3000")
	if wantOut, _ := untraced(t, "hottrap", "0", "0", "3000"); out != wantOut {
		t.Errorf("stdout %q, untraced %q", out, wantOut)
	}
	p := r.Profile
	var calls int64
	for _, th := range p.Threads {
		for _, a := range th.Arcs {
			if p.FuncName(a.Callee) == "libc.so.6:_setjmp" {
				calls += a.Calls
			}
		}
	}
	for f, fn := range p.Functions {
		if p.FuncName(f) == "libc.so.6:_setjmp" && (fn.Probe != model.ProbeCounted || fn.ProbeNote != "returns twice: counted, not timed") {
			t.Errorf("_setjmp: probe %v (%q), want counted for returning twice", fn.Probe, fn.ProbeNote)
		}
	}
	if calls != 3001 {
		t.Errorf("_setjmp: %d calls counted, want 3001 (hottrap's 3000 and the start-up's)", calls)
	}
}
