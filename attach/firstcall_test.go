package attach

import (
	"regexp"
	"testing"

	"github.com/profile-dev/profile/model"
)

// firstcall's callfirst (call leaf) and pushcall (push rbx; call leaf)
// take their inline probes at that call: counts and arcs exact under
// every probe kind, timed and counted, the program's output as untraced.
func TestProbeAtTheFirstCall(t *testing.T) {
	const n = 100000
	wantOut, _ := untraced(t, "firstcall", "100000")
	forEachProbe(t, func(t *testing.T, opt Options) {
		r, out := recordWorkload(t, "firstcall", opt, "100000")
		if out != wantOut {
			t.Errorf("stdout %q, untraced %q", out, wantOut)
		}
		got := observe(r.Profile).Functions
		if got["callfirst"].Calls != n || got["pushcall"].Calls != n || got["leaf"].Calls != 2*n || got["main"].Calls != 1 {
			t.Errorf("calls %v", got)
		}
		p := r.Profile
		arcs := map[string]int64{}
		for _, th := range p.Threads {
			for _, nd := range th.Nodes {
				if nd.Parent != model.None {
					arcs[p.FuncName(th.Nodes[nd.Parent].Func)+">"+p.FuncName(nd.Func)] += nd.Calls
				}
			}
		}
		if arcs["callfirst>leaf"] != n || arcs["pushcall>leaf"] != n || arcs["main>callfirst"] != n || arcs["main>pushcall"] != n {
			t.Errorf("arcs %v", arcs)
		}
		if want := map[bool]int{true: 2}[opt.Probes != ProbesTrap]; r.Stats.Probes.CallEntries != want {
			t.Errorf("%d probes at a call, want %d", r.Stats.Probes.CallEntries, want)
		}
		if opt.Probes == ProbesTrap {
			return
		}
		// Counted: the counting stub finds the caller's return address
		// where the entry stub does.
		opt.Counted = regexp.MustCompile(`^(callfirst|pushcall)$`)
		r, _ = recordWorkload(t, "firstcall", opt, "100000")
		if got = observe(r.Profile).Functions; got["leaf"].Calls != 2*n || r.Stats.Probes.CallEntries != 2 {
			t.Errorf("counted: calls %v, %d probes at a call", got, r.Stats.Probes.CallEntries)
		}
		var counted int
		for tid, a := range threadArcs(r.Profile) {
			if a["main>callfirst"] != 0 || a["main>pushcall"] != 0 {
				counted++
				if a["main>callfirst"] != n || a["main>pushcall"] != n {
					t.Errorf("counted: thread %d: arcs %v", tid, a)
				}
			}
		}
		if counted != 1 {
			t.Errorf("counted: %d threads with counted calls, want main's", counted)
		}
	})
}
