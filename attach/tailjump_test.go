package attach

import (
	"testing"

	"github.com/profile-dev/profile/internal/workload"
	"github.com/profile-dev/profile/model"
)

// vcall's forwarders are a load and a virtual tail call (mov (%rdi),%rax;
// jmp *0x8(%rax)): their first bytes end in an indirect jump, which the
// trampoline runs as it is. Under --probes auto every function of it is
// inline, the counts exact, and no stop comes per call.
func TestVirtualTailCallsInline(t *testing.T) {
	opt := defaultOptions(t)
	opt.Probes = ProbesAuto
	r, out := recordWorkload(t, "vcall", opt)
	for _, fn := range []string{"area_of(Shape const*, long)", "scale_of(Shape const*)", "Square::area(long) const", "Circle::scale() const", "main"} {
		if got := probeOf(r.Profile, fn); got != ProbesInline {
			t.Errorf("%s got probe %q, want inline", fn, got)
		}
	}
	checkExpected(t, "vcall", r)
	if wantOut, _ := untraced(t, "vcall"); out != wantOut {
		t.Errorf("stdout %q, untraced %q", out, wantOut)
	}
	exeAllInline(t, r.Profile, 7)
	if r.Stats.Stops > 50 {
		t.Errorf("%d stops for 800,001 calls: want a few for set-up", r.Stats.Stops)
	}
}

// The same calls, fewer of them, under each probe kind.
func TestVirtualTailCallsExact(t *testing.T) {
	forEachProbe(t, func(t *testing.T, opt Options) {
		want, err := workload.SelfCheck("vcall", "2000")
		if err != nil {
			t.Fatal(err)
		}
		r, out := recordWorkload(t, "vcall", opt, "2000")
		compareExpected(t, want, r.Profile)
		if wantOut, _ := untraced(t, "vcall", "2000"); out != wantOut {
			t.Errorf("stdout %q, untraced %q", out, wantOut)
		}
	})
}

// exeAllInline checks that every function of p's executable (at least
// min of them) had an inline probe.
func exeAllInline(t *testing.T, p *model.Profile, min int) {
	t.Helper()
	seen := 0
	for f, fn := range p.Functions {
		if fn.Module == 0 || p.Modules[fn.Module].Path != p.Meta.Exe {
			continue
		}
		seen++
		if fn.Probe != model.ProbeInline {
			t.Errorf("%s: probe %v (%s), want inline", p.FuncName(f), fn.Probe, fn.ProbeNote)
		}
	}
	if seen < min {
		t.Errorf("%d functions of %s in the profile, want %d at least", seen, p.Meta.Exe, min)
	}
}
