package attach

import (
	"fmt"
	"testing"
	"time"

	"github.com/profile-dev/profile/model"
)

// tailplt's sortall ends in a tail jump into the C library (jmp
// qsort@plt). With exit probes its frame ends at that jump, as a return
// does: the stack then shows qsort under main, as perf sees it, so
// qsort's calls of cmp are main's, sortall's time is its own few
// instructions, and the samples taken in qsort are main's. Hijacked (trap
// probes, inline without exit probes) the frame lasts until qsort
// returns, cmp's calls under it. grab (all of it jmp malloc@plt) is
// hijacked under every kind. Counts exact under every kind; the output
// as untraced.
func TestTailJumpThroughThePLT(t *testing.T) {
	forEachProbe(t, func(t *testing.T, opt Options) {
		rounds := int64(200)
		if opt.Probes == ProbesTrap {
			rounds = 3 // two stops a call of cmp
		}
		wantOut, _ := untraced(t, "tailplt", fmt.Sprint(rounds))
		var compares int64
		if _, err := fmt.Sscanf(wantOut, fmt.Sprintf("tailplt: %d rounds, %%d compares", rounds), &compares); err != nil || compares < rounds*1000 {
			t.Fatalf("untraced output %q: %v", wantOut, err)
		}
		r, out := recordWorkload(t, "tailplt", opt, fmt.Sprint(rounds))
		if out != wantOut {
			t.Errorf("stdout %q, untraced %q", out, wantOut)
		}
		p := r.Profile
		got := observe(p).Functions
		if got["main"].Calls != 1 || got["sortall"].Calls != uint64(rounds) || got["grab"].Calls != uint64(rounds) || got["cmp"].Calls != uint64(compares) {
			t.Errorf("calls %v, want cmp %d", got, compares)
		}
		arcs, total := map[string]int64{}, map[string]int64{}
		for _, th := range p.Threads {
			for _, nd := range th.Nodes {
				if nd.Parent != model.None {
					arcs[p.FuncName(th.Nodes[nd.Parent].Func)+">"+p.FuncName(nd.Func)] += nd.Calls
				}
				total[p.FuncName(nd.Func)] += nd.TotalNs
			}
		}
		endsAtJump := opt.Probes == ProbesInline && !opt.hijackOnly
		if endsAtJump {
			if r.Stats.Probes.Exits == 0 || arcs["main>cmp"] != compares || arcs["sortall>cmp"] != 0 {
				t.Errorf("%d functions with exit probes, arcs %v: want cmp's %d calls under main", r.Stats.Probes.Exits, arcs, compares)
			}
			if total["sortall"]*50 > total["cmp"] {
				t.Errorf("sortall %v in all, cmp %v: want qsort's time out of sortall", time.Duration(total["sortall"]), time.Duration(total["cmp"]))
			}
		} else if arcs["sortall>cmp"] != compares || arcs["main>cmp"] != 0 {
			t.Errorf("arcs %v: want cmp's %d calls under sortall", arcs, compares)
		}
		if arcs["main>sortall"] != rounds || arcs["main>grab"] != rounds {
			t.Errorf("arcs %v", arcs)
		}
		if !endsAtJump {
			return
		}
		// Sampled: qsort's CPU time is main's, as perf gives it.
		opt.SamplePeriod = 50 * time.Microsecond
		r, _ = recordWorkload(t, "tailplt", opt, fmt.Sprint(20*rounds))
		ns, _ := sampled(r.Profile)
		var all int64
		for _, v := range ns {
			all += v
		}
		if cs := r.Profile.Meta.CPUSamples; cs == nil || cs.Samples < minSamples || ns["sortall"]*100 > all || ns["main"]*10 < all {
			t.Errorf("sampled %v (%v in all): want main's a tenth or more (qsort's), sortall's under 1%%", ns, time.Duration(all))
		}
	})
}
