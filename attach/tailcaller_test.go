package attach

import (
	"strconv"
	"testing"
	"time"

	"github.com/profile-dev/profile/model"
)

// tailshort's forward runs nanoseconds of its own and then tail-jumps to
// work (microseconds): work's entry comes on forward's slot, which the
// probe aimed at the return stub. Its caller is main's call of forward,
// not code no traced function holds: forward moves to counting like any
// short function (kept timed, it cost a timed probe per call for
// nothing: redis's handleClientsWithPendingWritesUsingThreads). Every
// call stays counted: forward's timed ones in the tree, the counted ones
// in the arcs, work's all timed and all below main, none read as an
// indirect call (the return stub's address is no call site). Both ways a tail caller's slot is aimed there are tried: its tail
// site's exit probe, and its hijacked return.
func TestTailCallerMovesToCounting(t *testing.T) {
	for _, kind := range []string{ProbesAuto, probesInlineHijack} {
		t.Run(kind, func(t *testing.T) { tailCallerMoves(t, kind) })
	}
}

func tailCallerMoves(t *testing.T, kind string) {
	const calls = 40000
	opt := defaultOptions(t)
	withKind(&opt, kind)
	opt.SamplePeriod = 250 * time.Microsecond
	r, out := recordWorkload(t, "tailshort", opt, strconv.Itoa(calls))
	p := r.Profile
	if probeOf(p, "forward") != "counted" || probeOf(p, "work") != "inline" {
		t.Fatalf("probes: forward %s, work %s; want forward moved to counting, work timed", probeOf(p, "forward"), probeOf(p, "work"))
	}
	var forward, work int64
	for _, th := range p.Threads {
		for _, n := range th.Nodes {
			switch p.FuncName(n.Func) {
			case "forward":
				forward += n.Calls
			case "work":
				work += n.Calls
				if n.IndirectCalls != 0 {
					t.Errorf("work: %d of %d calls read as indirect: a tail call is no call instruction", n.IndirectCalls, n.Calls)
				}
				if n.Parent == model.None || p.FuncName(th.Nodes[n.Parent].Func) != "main" {
					t.Errorf("work's calls (%d) below %v, want main", n.Calls, n.Parent)
				}
			}
		}
	}
	for _, arcs := range threadArcs(p) {
		forward += arcs["main>forward"]
	}
	if forward != calls || work != calls {
		t.Errorf("forward %d calls, work %d; want %d each", forward, work, calls)
	}
	if want, _ := untraced(t, "tailshort", strconv.Itoa(calls)); out != want {
		t.Errorf("stdout %q, untraced %q", out, want)
	}
}
