package attach

import (
	"fmt"
	"testing"

	"github.com/profile-dev/profile/internal/workload"
	"github.com/profile-dev/profile/model"
)

// A snapshot as the checkpoint function returns (testdata/src/
// checkpoints.c: three phases of 100 calls of work, each ending in
// checkpoint, 1.1 s apart, then 50 more calls): each is a valid profile of
// everything up to that return, counts never decrease from one to the
// next, and the final profile's counts are the last snapshot's plus what
// came after.
func TestCheckpointSnapshots(t *testing.T) {
	forEachProbe(t, func(t *testing.T, opt Options) {
		var snaps []*model.Profile
		opt.Live.Checkpoint = "checkpoint"
		opt.Live.Snapshot = func(p *model.Profile, _ Stats) { snaps = append(snaps, p) }
		r, out := recordWorkload(t, "checkpoints", opt, "3", "100")
		if want := "phase 1: work 100\nphase 2: work 200\nphase 3: work 300\nend: work 350\n"; out != want {
			t.Fatalf("output %q, want %q", out, want)
		}
		if len(snaps) != 3 {
			t.Fatalf("%d snapshots, want one per checkpoint return (3)", len(snaps))
		}
		prev := map[string]workload.Counts{}
		for k, s := range append(snaps, r.Profile) {
			if err := s.Validate(); err != nil {
				t.Fatalf("snapshot %d: %v", k+1, err)
			}
			c := observe(s).Functions
			phase := uint64(min(k+1, 3))
			want := map[string]uint64{"work": 100 * phase, "checkpoint": phase, "main": 1}
			if k == 3 {
				want["work"] = 350 // the final profile: 50 calls after the last checkpoint
			}
			for name, n := range want {
				if c[name].Calls != n {
					t.Errorf("%s: %s called %d times, want %d", which(k), name, c[name].Calls, n)
				}
			}
			for name, n := range prev {
				if c[name].Calls < n.Calls {
					t.Errorf("%s: %s called %d times, fewer than the %d before", which(k), name, c[name].Calls, n.Calls)
				}
			}
			prev = c
		}
	})
}

func which(k int) string {
	if k == 3 {
		return "final profile"
	}
	return fmt.Sprintf("snapshot %d", k+1)
}
