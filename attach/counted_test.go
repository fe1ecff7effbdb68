package attach

import (
	"maps"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/profile-dev/profile/instrument"
	"github.com/profile-dev/profile/internal/proctext"
	"github.com/profile-dev/profile/model"
)

// countedRE gives the counted workload's leaf and twig the counting probe.
var countedRE = regexp.MustCompile(`^(leaf|twig)$`)

// threadArcs is each thread's arcs as "caller>callee" -> calls, by the
// thread's nesting level and tid (the main thread is level 0).
func threadArcs(p *model.Profile) map[int]map[string]int64 {
	out := map[int]map[string]int64{}
	for _, th := range p.Threads {
		m := map[string]int64{}
		for _, a := range th.Arcs {
			caller := "?"
			if a.Caller != model.None {
				caller = p.FuncName(a.Caller)
			}
			m[caller+">"+p.FuncName(a.Callee)] += a.Calls
		}
		out[th.Tid] = m
	}
	return out
}

// nodeCalls is each function's calls in the threads' trees.
func nodeCalls(p *model.Profile) map[string]int64 {
	got := map[string]int64{}
	for _, th := range p.Threads {
		for _, n := range th.Nodes {
			got[p.FuncName(n.Func)] += n.Calls
		}
	}
	return got
}

// counted 20000 2: leaf and twig take the counting probe; every thread's
// arcs are the workload's own calls per caller (mid calls leaf three times
// and twig once per iteration, twig leaf once; main calls leaf through a
// pointer), leaf and twig have no node in any tree, the timed functions
// keep their exact counts, and the program's output is an untraced run's.
// Under trap probes (no inline code, so nothing counts) the same calls are
// timed.
func TestCountedExact(t *testing.T) {
	const n = 20000
	args := []string{strconv.Itoa(n), "2"}
	for _, kind := range []string{ProbesAuto, ProbesInline, ProbesTrap} {
		t.Run(kind, func(t *testing.T) {
			opt := defaultOptions(t)
			opt.Probes, opt.Counted = kind, countedRE
			r, out := recordWorkload(t, "counted", opt, args...)
			if want, _ := untraced(t, "counted", args...); out != want {
				t.Errorf("stdout %q, untraced %q", out, want)
			}
			p := r.Profile
			calls := nodeCalls(p)
			if calls["mid"] != 3*n || calls["work"] != 3 {
				t.Errorf("timed calls: mid %d work %d, want %d and 3", calls["mid"], calls["work"], 3*n)
			}
			if kind == ProbesTrap {
				if calls["leaf"] != 13*n || calls["twig"] != 3*n || probeOf(p, "leaf") != "trap" {
					t.Errorf("trap probes: leaf %d (%s), twig %d, want %d and %d timed", calls["leaf"], probeOf(p, "leaf"), calls["twig"], 13*n, 3*n)
				}
				return
			}
			for f, want := range map[string]string{"leaf": "counted", "twig": "counted", "mid": "inline", "work": "inline"} {
				if got := probeOf(p, f); got != want {
					t.Errorf("%s: probe %q, want %q", f, got, want)
				}
			}
			if calls["leaf"] != 0 || calls["twig"] != 0 {
				t.Errorf("counted functions in the trees: leaf %d, twig %d calls", calls["leaf"], calls["twig"])
			}
			// leaf and twig, and the C library's functions that return
			// twice (vfork, traced by default), which take the counting
			// probe rather than a timed one.
			twice := 0
			for _, fn := range p.Functions {
				if fn.Probe == model.ProbeCounted && fn.ProbeNote == "returns twice: counted, not timed" {
					twice++
				}
			}
			if r.Stats.Probes.Counted != 2+twice {
				t.Errorf("Stats.Probes.Counted = %d, want 2 and %d that return twice", r.Stats.Probes.Counted, twice)
			}
			worker := map[string]int64{"mid>leaf": 3 * n, "twig>leaf": n, "mid>twig": n}
			main := maps.Clone(worker)
			main["main>leaf"] = n
			got := threadArcs(p)
			if len(got) != 3 {
				t.Fatalf("%d threads, want 3", len(got))
			}
			for _, th := range p.Threads {
				want := worker
				if th.Level == 0 {
					want = main
				}
				if !maps.Equal(got[th.Tid], want) {
					t.Errorf("thread %d (level %d) arcs %v, want %v", th.Tid, th.Level, got[th.Tid], want)
				}
			}
		})
	}
}

// treeEdges is each thread's call-tree edges as "caller>callee" -> calls
// (nodes with calls), by tid.
func treeEdges(p *model.Profile) map[int]map[string]int64 {
	out := map[int]map[string]int64{}
	for _, th := range p.Threads {
		m := map[string]int64{}
		for _, n := range th.Nodes {
			if n.Calls > 0 && n.Parent != model.None {
				m[p.FuncName(th.Nodes[n.Parent].Func)+">"+p.FuncName(n.Func)] += n.Calls
			}
		}
		out[th.Tid] = m
	}
	return out
}

// counted 20000 2 with only twig counted: leaf stays timed, and its calls
// from twig, which has no frames, are twig's in the trees (a context of
// twig's with no calls, below mid), not mid's: per thread mid calls leaf
// 3 × 20,000 times and twig 20,000 times, and twig calls leaf 20,000
// times, as the workload does. twig is named by its name, and as
// module:name (the executable's functions too).
func TestTimedCalleeOfCounted(t *testing.T) {
	const n = 20000
	for _, c := range []struct{ kind, re string }{{ProbesAuto, `^twig$`}, {ProbesInline, `^counted:twig$`}} {
		kind := c.kind
		t.Run(kind, func(t *testing.T) {
			opt := defaultOptions(t)
			opt.Probes, opt.Counted = kind, regexp.MustCompile(c.re)
			r, _ := recordWorkload(t, "counted", opt, strconv.Itoa(n), "2")
			p := r.Profile
			// The workload's own functions' edges, not the C library's.
			ownEdge := regexp.MustCompile(`^(START|main|work|mid|twig)>(work|mid|leaf)$`)
			if probeOf(p, "twig") != "counted" || probeOf(p, "leaf") != "inline" {
				t.Fatalf("twig's probe %s, leaf's %s, want counted and inline", probeOf(p, "twig"), probeOf(p, "leaf"))
			}
			edges, arcs := treeEdges(p), threadArcs(p)
			for _, th := range p.Threads {
				want := map[string]int64{"work>mid": n, "mid>leaf": 3 * n, "twig>leaf": n}
				if th.Level == 0 {
					want["main>work"], want["main>leaf"] = 1, n
				} else {
					want["START>work"] = 1
				}
				got := edges[th.Tid]
				maps.DeleteFunc(got, func(e string, _ int64) bool { return !ownEdge.MatchString(e) })
				if !maps.Equal(got, want) {
					t.Errorf("thread %d (level %d) tree edges %v, want %v", th.Tid, th.Level, got, want)
				}
				if got := arcs[th.Tid]; !maps.Equal(got, map[string]int64{"mid>twig": n}) {
					t.Errorf("thread %d arcs %v, want mid>twig %d", th.Tid, got, n)
				}
			}
		})
	}
}

// Attached to a running counted, its counting probes count from then on:
// per thread, leaf's calls from mid are three times twig's (give or take
// the iteration in flight at each end), twig's calls of leaf are its own,
// and mid's timed calls match. With samples, the busy call sites take
// fast paths, their calls re-aimed at their own. The detach leaves the
// text equal to the file's. Profilers with counted functions SIGKILLed
// while attached leave the program running (the counting stub and the
// fast paths need no tracer), and the next attach counts again and puts
// every byte back.
func TestCountedAttachAndKilled(t *testing.T) {
	target, out := startWorkload(t, "counted", "1000", "2", "120")
	pid := target.Process.Pid
	before := profilerAreas(t, pid, nil)
	time.Sleep(200 * time.Millisecond)
	opt := defaultOptions(t)
	opt.Probes, opt.Counted = ProbesAuto, countedRE
	opt.SamplePeriod, opt.Timed = 250*time.Microsecond, regexp.MustCompile(`^mid$`)
	check := func(what string, r *Result) {
		t.Helper()
		p := r.Profile
		if probeOf(p, "leaf") != "counted" || probeOf(p, "twig") != "counted" {
			t.Errorf("%s: leaf %s, twig %s", what, probeOf(p, "leaf"), probeOf(p, "twig"))
		}
		arcs := threadArcs(p)
		var total int64
		for _, th := range p.Threads {
			a := arcs[th.Tid]
			var mid int64
			for _, nd := range th.Nodes {
				if p.FuncName(nd.Func) == "mid" {
					mid += nd.Calls
				}
			}
			total += a["mid>twig"]
			if abs(a["mid>leaf"]-3*a["mid>twig"]) > 3 || abs(a["twig>leaf"]-a["mid>twig"]) > 1 || abs(mid-a["mid>twig"]) > 1 {
				t.Errorf("%s: thread %d: arcs %v, mid timed %d", what, th.Tid, a, mid)
			}
		}
		if total == 0 {
			t.Errorf("%s: no counted call", what)
		}
	}
	r := attachForOpt(t, pid, 500*time.Millisecond, opt)
	check("attached", r)
	if r.Stats.Probes.FastSites == 0 {
		t.Errorf("no call site re-aimed at a fast path of its own (%d fast paths, %d calls)", r.Stats.Probes.Fast, r.Stats.Probes.FastCalls)
	}
	if err := proctext.FileBytes(pid); err != nil {
		t.Fatalf("after the detach: %v", err)
	}
	for range 2 {
		tracer := startTracer(t, pid, nil, "PROFILE_TEST_TRACE_PID="+strconv.Itoa(pid), "PROFILE_TEST_PROBES="+ProbesAuto,
			"PROFILE_TEST_COUNTED="+countedRE.String(), "PROFILE_TEST_SAMPLE=1")
		time.Sleep(500 * time.Millisecond)
		tracer.Process.Kill()
		tracer.Wait()
		time.Sleep(200 * time.Millisecond)
	}
	alive(t, target, out)
	check("after the kills", attachForOpt(t, pid, 500*time.Millisecond, opt))
	endsClean(t, target, out, before, "rounds ")
}

// fastpathCalls reads fastpath's own counts: each thread's calls by arc,
// by tid.
func fastpathCalls(t *testing.T, out string) map[int]map[string]int64 {
	t.Helper()
	got := map[int]map[string]int64{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		if len(f) != 8 || f[0] != "calls" {
			t.Fatalf("fastpath printed %q", line)
		}
		tid, _ := strconv.Atoi(f[1])
		m := map[string]int64{}
		for i := 2; i < 8; i += 2 {
			m[f[i]], _ = strconv.ParseInt(f[i+1], 10, 64)
		}
		got[tid] = m
	}
	return got
}

// The counting fast path (one plain increment in a slot of the function's
// for a call from one of its busiest sites, by the thread that owns the
// counters) keeps every thread's arcs exact through a process's life: main
// alone (armed for it), main beside a second thread (disarmed before that
// thread runs, armed again for one of them), a third thread alone while
// main waits (its owner from a later look), a fourth on the third's stack
// and thread pointer (disarmed at its clone: it would pass for the gone
// owner), main alone again, a forked child (its copy of the slots counts
// its calls only) and main after it. leaf has more call sites than a fast
// path has slots: the others take the counting stub. Each thread's arcs
// to leaf and twig are the counts fastpath keeps itself (sites, other and
// now, short too, move to counting and take fast paths of their own).
func TestCountedFastPathExact(t *testing.T) {
	for _, kind := range []string{ProbesAuto, ProbesInline} {
		t.Run(kind, func(t *testing.T) {
			opt := defaultOptions(t)
			opt.Probes, opt.Counted, opt.SamplePeriod = kind, countedRE, 250*time.Microsecond
			r, out := recordWorkload(t, "fastpath", opt, "300")
			want := fastpathCalls(t, out)
			if len(want) != 5 {
				t.Fatalf("fastpath reported %d threads, want 5: %q", len(want), out)
			}
			got := threadArcs(r.Profile)
			for tid, w := range want {
				maps.DeleteFunc(got[tid], func(arc string, _ int64) bool { return !countedRE.MatchString(arc[strings.Index(arc, ">")+1:]) })
				if !maps.Equal(got[tid], w) {
					t.Errorf("thread %d: arcs %v, want fastpath's own %v", tid, got[tid], w)
				}
			}
			if r.Stats.Probes.Fast < 2 || r.Stats.Probes.FastCalls == 0 || r.Stats.Probes.FastSites == 0 {
				t.Errorf("fast paths: %d functions, %d calls, %d call sites re-aimed; want leaf's and twig's at least, calls and sites",
					r.Stats.Probes.Fast, r.Stats.Probes.FastCalls, r.Stats.Probes.FastSites)
			}
		})
	}
}

// A forked child not followed gets the text back, its call sites re-aimed
// at their own fast paths too: it has its parent's thread pointer and
// memory of rings, and would count its calls as the owner's. The parent's
// four threads keep exactly fastpath's own arcs. A second a phase: main
// alone long enough before the fork for a look to arm its fast paths.
func TestCountedFastPathUnfollowedChild(t *testing.T) {
	opt := defaultOptions(t)
	opt.Probes, opt.Counted, opt.SamplePeriod, opt.NoFollowFork = ProbesAuto, countedRE, 250*time.Microsecond, true
	r, out := recordWorkload(t, "fastpath", opt, "1000")
	want := fastpathCalls(t, out)
	got := threadArcs(r.Profile)
	seen := 0
	for tid, w := range want {
		g, ok := got[tid]
		if !ok {
			continue // the child's
		}
		seen++
		maps.DeleteFunc(g, func(arc string, _ int64) bool { return !countedRE.MatchString(arc[strings.Index(arc, ">")+1:]) })
		if !maps.Equal(g, w) {
			t.Errorf("thread %d: arcs %v, want fastpath's own %v", tid, g, w)
		}
	}
	if seen != 4 || len(want) != 5 || r.Stats.Probes.FastSites == 0 {
		t.Errorf("%d of fastpath's %d threads traced, %d call sites re-aimed: want 4 of 5, and sites", seen, len(want), r.Stats.Probes.FastSites)
	}
}

// counted 20000 2 1.5 with twig untraced and leaf kept timed: mid's calls
// are short enough to count, but leaf's calls through twig come from code
// no traced function holds, so counted mid could not hold their frames:
// mid stays timed, and every leaf frame is below mid (four per call of
// mid), none below work.
func TestHiddenCalleeKeepsCallerTimed(t *testing.T) {
	opt := defaultOptions(t)
	f, err := instrument.NewFilter(nil, []string{":twig$"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	opt.Filter, opt.Timed = f, regexp.MustCompile(`^leaf$`)
	opt.Probes, opt.SamplePeriod = ProbesAuto, 250*time.Microsecond
	r, _ := recordWorkload(t, "counted", opt, "20000", "2", "1.5")
	p := r.Profile
	if probeOf(p, "mid") != "inline" || probeOf(p, "leaf") != "inline" {
		for _, fn := range p.Functions {
			if fn.Name == "mid" || fn.Name == "twig" {
				t.Logf("%s: %s %q", fn.Name, fn.Probe, fn.ProbeNote)
			}
		}
		t.Fatalf("mid's probe %s, leaf's %s; want both timed", probeOf(p, "mid"), probeOf(p, "leaf"))
	}
	edges := treeEdges(p)
	for _, th := range p.Threads {
		mid := edges[th.Tid]["work>mid"]
		if got := edges[th.Tid]; mid == 0 || got["mid>leaf"] != 4*mid || got["work>leaf"] != 0 {
			t.Errorf("thread %d: work>mid %d, mid>leaf %d, work>leaf %d; want leaf 4 times a call of mid, all below it", th.Tid, mid, got["mid>leaf"], got["work>leaf"])
		}
	}
}

// spill 20: 12,000 call sites of leaf, more than a thread's count table
// holds; the calls of the sites past it go to the ring as events, and
// every caller's calls of leaf stay exact (1,200 a round from each of
// a0 ... a9), under inline and auto probes (whose fast path takes a few
// sites' calls apart).
func TestCountedSpillsPastTheTable(t *testing.T) {
	const rounds = 20
	for _, kind := range []string{ProbesAuto, ProbesInline} {
		t.Run(kind, func(t *testing.T) {
			opt := defaultOptions(t)
			opt.Probes, opt.Counted = kind, regexp.MustCompile(`^leaf$`)
			r, out := recordWorkload(t, "spill", opt, strconv.Itoa(rounds))
			if want, _ := untraced(t, "spill", strconv.Itoa(rounds)); out != want {
				t.Errorf("stdout %q, untraced %q", out, want)
			}
			p := r.Profile
			if probeOf(p, "leaf") != "counted" {
				t.Fatalf("leaf: probe %q, want counted", probeOf(p, "leaf"))
			}
			want := map[string]int64{}
			for i := range 10 {
				want["a"+strconv.Itoa(i)+">leaf"] = 1200 * rounds
			}
			got := threadArcs(p)
			if len(p.Threads) != 1 || !maps.Equal(got[p.Threads[0].Tid], want) {
				t.Errorf("arcs %v, want %v", got, want)
			}
			if r.Stats.Probes.Spilled == 0 || r.Stats.Probes.Spilled >= 12000*rounds {
				t.Errorf("%d calls spilled past the count table, want some of the %d", r.Stats.Probes.Spilled, 12000*rounds)
			}
		})
	}
}

// A counted function reached by a tail jump from a timed one counts for
// the call site the jump's function was called from, whether that
// function's returns take exit probes (its tail jump ends it) or are
// hijacked (its return slot holds the return stub when the counted
// function runs: the count goes to the call site its shadow entry
// keeps). sites 3000: main calls loop_entry 3,000 times and via_tail 300
// times, which jumps to loop_entry.
func TestCountedTailCallee(t *testing.T) {
	forEachKind(t, inlineKinds, func(t *testing.T, opt Options) {
		opt.Counted = regexp.MustCompile(`^loop_entry$`)
		r, _ := recordWorkload(t, "sites", opt, "3000")
		p := r.Profile
		if got := probeOf(p, "loop_entry"); got != "counted" {
			t.Fatalf("loop_entry: probe %q, want counted", got)
		}
		if got := probeOf(p, "via_tail"); got != "inline" {
			t.Fatalf("via_tail: probe %q, want inline", got)
		}
		arcs := map[string]int64{}
		for _, m := range threadArcs(p) {
			for k, v := range m {
				if strings.HasSuffix(k, ">loop_entry") {
					arcs[k] += v
				}
			}
		}
		if want := map[string]int64{"main>loop_entry": 3300}; !maps.Equal(arcs, want) {
			t.Errorf("loop_entry's arcs %v, want %v", arcs, want)
		}
	})
}
