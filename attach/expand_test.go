package attach

import (
	"testing"
	"time"
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
