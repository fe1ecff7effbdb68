package attach

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/profile-dev/profile/model"
)

// With sampled times, wrap's calls (a nanosleep each, tens of µs) are
// judged by their own work, not the wait inside: it moves to counting.
// The nanosleeps stay timed, every one below wrap (its frames open below
// the counted caller, EnterVia), and wrap's calls stay exact: those timed
// before the move in the tree, those counted after in the arcs.
func TestWaitingWrapperMovesToCounting(t *testing.T) {
	const n = 20000
	bin := filepath.Join(t.TempDir(), "waitwrap")
	if out, err := exec.Command("gcc", "-O2", "-fno-optimize-sibling-calls", "-o", bin, "testdata/waitwrap.c").CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	opt := defaultOptions(t)
	opt.Probes, opt.SamplePeriod = ProbesAuto, 250*time.Microsecond
	var out bytes.Buffer
	r, err := recordTo(context.Background(), []string{bin, strconv.Itoa(n), "300000000"}, opt, &out)
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != fmt.Sprintf("done %d\n", n) {
		t.Fatalf("the program printed %q", out.String())
	}
	p := r.Profile
	const sleep = "libc.so.6:nanosleep"
	if probeOf(p, "wrap") != "counted" || probeOf(p, sleep) != "inline" {
		t.Fatalf("wrap %s, nanosleep %s; want wrap moved to counting, nanosleep timed", probeOf(p, "wrap"), probeOf(p, sleep))
	}
	edges := treeEdges(p)
	arcs := threadArcs(p)
	th := p.Threads[0]
	var timedWrap int64
	for _, nd := range th.Nodes {
		if nd.Parent != model.None && p.FuncName(nd.Func) == "wrap" {
			timedWrap += nd.Calls
		}
	}
	if got := edges[th.Tid]; got["wrap>"+sleep] != n || got["work>"+sleep] != 0 {
		t.Errorf("wrap>nanosleep %d, work>nanosleep %d; want all %d below wrap", got["wrap>"+sleep], got["work>"+sleep], n)
	}
	if counted := arcs[th.Tid]["work>wrap"]; counted == 0 || timedWrap+counted != n {
		t.Errorf("wrap: %d calls timed, %d counted; want %d in all, some counted", timedWrap, counted, n)
	}
}
