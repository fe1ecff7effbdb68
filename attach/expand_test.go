package attach

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/profile-dev/profile/model"
)

// Auto-expand stops every thread, again and again, to patch: the targets
// run as if untraced (same stdout and exit status) and every function
// traced from the start keeps its exact counts, with threads blocked on
// condition variables (pool), computing and sleeping (longrun) and
// forking and exec'ing (forks). Each tick takes two more functions.
func TestAutoExpandLeavesTargetsExact(t *testing.T) {
	for _, c := range []struct {
		name   string
		args   []string
		paused bool // the run lasts long enough for a pause to be sure
	}{
		{"pool", nil, true},
		{"longrun", []string{"--threads", "3", "--seconds", "1"}, true},
		{"forks", nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			forEachProbe(t, func(t *testing.T, opt Options) {
				opt.Expand.Top, opt.Expand.Every, opt.Expand.Depth = 2, 3*time.Millisecond, 1
				r, out := recordWorkload(t, c.name, opt, c.args...)
				wantOut, wantCode := untraced(t, c.name, c.args...)
				if out != wantOut || r.ExitCode != wantCode || r.Signal != 0 {
					t.Errorf("stdout %q, exit %d (signal %v); untraced %q, exit %d", out, r.ExitCode, r.Signal, wantOut, wantCode)
				}
				if c.name != "longrun" { // its counts depend on time
					checkExpected(t, c.name, r)
				}
				if c.paused && (r.Stats.Expand.Pauses == 0 || r.Stats.Expand.Added == 0) {
					t.Errorf("no pause to patch: %d functions taken, %d callees added, %d pauses",
						r.Stats.Expand.Taken, r.Stats.Expand.Added, r.Stats.Expand.Pauses)
				}
				later := 0
				for _, f := range r.Profile.Functions {
					if f.TracedSinceNs > 0 {
						later++
					}
				}
				if later != r.Stats.Expand.Added {
					t.Errorf("%d functions traced from later in the run, %d callees added", later, r.Stats.Expand.Added)
				}
				t.Logf("%d functions taken, %d callees added, %d pauses (%s)", r.Stats.Expand.Taken, r.Stats.Expand.Added,
					r.Stats.Expand.Pauses, time.Duration(r.Stats.Expand.PausedNs))
			})
		})
	}
}

// A function counted from the start is traced: auto-expand, taking its
// caller, must not take it for a new callee (it did: its probe was set
// again and the profile said it was traced only from then on). hidden's
// phase has work's counted time as its self time, so phase is taken,
// and work lies among its callees.
func TestAutoExpandKeepsCounted(t *testing.T) {
	forEachKind(t, inlineKinds, func(t *testing.T, opt Options) {
		opt.Counted = regexp.MustCompile(`^work$`)
		opt.Expand.Top, opt.Expand.Every, opt.Expand.Depth = 2, 3*time.Millisecond, 2
		var steps []Expansion
		opt.Expand.Report = func(x Expansion) { steps = append(steps, x) }
		r, out := recordWorkload(t, "hidden", opt, "3", "20000")
		if r.ExitCode != 0 || !strings.Contains(out, "phase 3: work 20000") {
			t.Fatalf("exit %d, stdout %q", r.ExitCode, out)
		}
		taken := false
		for _, x := range steps {
			taken = taken || x.Func == "phase" || x.Func == "main"
			if slices.Contains(x.Added, "work") {
				t.Errorf("auto-expand took %s and added work, counted from the start", x.Func)
			}
		}
		if !taken {
			t.Errorf("neither phase nor main was taken (%d steps): the test shows nothing", len(steps))
		}
		p := r.Profile
		counted := 0
		for i, f := range p.Functions {
			if f.Probe == model.ProbeCounted {
				counted++
			}
			if p.FuncName(i) == "work" && (f.Probe != model.ProbeCounted || f.TracedSinceNs != 0) {
				t.Errorf("work: probe %v (%q), traced since %d ns; want counted from the start", f.Probe, f.ProbeNote, f.TracedSinceNs)
			}
		}
		var calls int64 // a counted function's calls are its arcs'
		for _, arcs := range threadArcs(p) {
			calls += arcs["phase>work"]
		}
		if calls != 60000 {
			t.Errorf("work: %d calls from phase, want 60000", calls)
		}
		if r.Stats.Probes.Counted != counted {
			t.Errorf("--stats says %d counted functions, the profile %d", r.Stats.Probes.Counted, counted)
		}
	})
}
