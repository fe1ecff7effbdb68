package attach

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/profile-dev/profile/detail"
	"github.com/profile-dev/profile/internal/workload"
	"github.com/profile-dev/profile/model"
)

// Detail recording (--detail, docs/detail.md) on testdata/src/requests.c:
// 1,000 requests, 7 slow (50 ms) and 3 failing, each logged with its
// arguments and return value. Exactly those calls are kept, each with its
// ancestors (main, serve) and with the values the workload logged. --slow is
// 40ms, not less: a fast request stretched past it (trap probes' stops on a
// loaded machine) is rightly kept, so a run that keeps more than the 7 is
// tried again, up to 3 runs.
func TestDetailKeepsExactlyTheInterestingCalls(t *testing.T) {
	cases := []struct {
		name string
		rule func() detail.Rule
		log  string // the workload's log lines of the calls to keep
	}{
		{"slow", func() detail.Rule { return detail.Rule{SlowNs: 40e6, Limit: 1000} }, "slow"},
		{"ret<0", func() detail.Rule {
			c, err := detail.ParseCond("ret<0")
			if err != nil {
				t.Fatal(err)
			}
			return detail.Rule{If: &c, Limit: 1000}
		}, "fail"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			forEachProbe(t, func(t *testing.T, opt Options) {
				opt.Detail.Funcs = regexp.MustCompile("^handle_request$")
				opt.Detail.Rule = tc.rule()
				n := map[string]int{"slow": 7, "fail": 3}[tc.log]
				r, out := recordWorkload(t, "requests", opt)
				for try := 2; try <= 3 && len(r.Profile.Threads) == 1 && len(r.Profile.Threads[0].Trees) > n; try++ {
					r, out = recordWorkload(t, "requests", opt)
				}
				var want []string
				for _, line := range strings.Split(out, "\n") {
					if strings.HasPrefix(line, tc.log+" ") {
						want = append(want, strings.TrimPrefix(line, tc.log+" "))
					}
				}
				if len(want) != n {
					t.Fatalf("the workload logged %d %s requests, want %d:\n%s", len(want), tc.log, n, out)
				}
				p := r.Profile
				if len(p.Threads) != 1 {
					t.Fatalf("%d threads, want 1", len(p.Threads))
				}
				th := p.Threads[0]
				var got []string
				for i, tr := range th.Trees {
					got = append(got, checkRequestTree(t, p, i, tr))
				}
				if strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Errorf("kept calls:\n%s\nwant (the workload's log):\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
				if th.DroppedTrees != 0 {
					t.Errorf("%d trees dropped, want 0", th.DroppedTrees)
				}
				if p.Meta.Detail == nil || p.Meta.Detail.Funcs != "^handle_request$" {
					t.Errorf("rule in the profile: %+v", p.Meta.Detail)
				}
			})
		})
	}
}

// checkRequestTree checks tree i's shape (main > serve > handle_request,
// times nested) and returns its kept call as the workload logs it.
func checkRequestTree(t *testing.T, p *model.Profile, i int, tr model.DetailTree) string {
	t.Helper()
	var names []string
	for _, c := range tr.Calls {
		names = append(names, fmt.Sprintf("%s@%d", p.FuncName(c.Func), c.Depth))
	}
	if got := strings.Join(names, " "); got != "main@0 serve@1 handle_request@2" {
		t.Errorf("tree %d: %s, want main@0 serve@1 handle_request@2", i, got)
		return ""
	}
	for k := 1; k < len(tr.Calls); k++ {
		in, out := tr.Calls[k], tr.Calls[k-1]
		if in.StartNs < out.StartNs || in.EndNs > out.EndNs {
			t.Errorf("tree %d: %s [%d, %d] not within %s [%d, %d]", i, names[k], in.StartNs, in.EndNs, names[k-1], out.StartNs, out.EndNs)
		}
	}
	for _, c := range tr.Calls[:2] {
		if c.Flags != model.DetailReturned {
			t.Errorf("tree %d: ancestor flags %b, want returned only", i, c.Flags)
		}
	}
	c := tr.Calls[2]
	if want := model.DetailKept | model.DetailArgs | model.DetailReturned; c.Flags != want {
		t.Errorf("tree %d: handle_request flags %b, want %b", i, c.Flags, want)
	}
	if c.NArgs != 3 {
		t.Errorf("tree %d: handle_request takes %d argument registers, want 3 (from its debug information)", i, c.NArgs)
	}
	return fmt.Sprintf("id=%d size=%d flags=%d ret=%d", int32(c.Args[0]), int64(c.Args[1]), int32(c.Args[2]), int32(c.Ret))
}

// Detail on every function leaves the counts exact (the inline stubs'
// three-slot entries wrap the rings many times), and with a rule that
// keeps every call, each thread's trees hold exactly its calls, each with
// its arguments. Keeping every call by --detail-if 'arg0/u64>=0' (a
// condition every call meets) takes the other way to the rings: the arguments wait in the stubs' side records until the
// call ends, and go to the ring from there whichever way it ends (a
// return, a tail call, a longjmp, an exception, a signal handler's
// nesting): in unusual, the calls left by longjmp and by exceptions were
// called with 1, the others with 0. (Trap probes count ljmp_a(1) and
// thrower_a(1) as returned: their return sites are reached by a jump
// too, after the longjmp and the catch.)
func TestDetailEverywhereKeepsCountsExact(t *testing.T) {
	always, err := detail.ParseCond("arg0/u64>=0")
	if err != nil {
		t.Fatal(err)
	}
	// Not --slow 1ns for the deferred way: on this VM the vCPUs' time
	// stamp counters differ by some hundred ticks, and a short call that
	// moves to the other CPU can measure 0 ns (not kept, rightly).
	rules := []struct {
		name   string
		slowNs int64
		cond   *detail.Cond
		all    bool
	}{{"keep-none", 3600e9, nil, false}, {"keep-all", 0, nil, true}, {"keep-all-deferred", 0, &always, true}}
	for _, name := range []string{"recursion", "threads", "unusual", "altstack"} {
		for _, rule := range rules {
			t.Run(name+"/"+rule.name, func(t *testing.T) {
				forEachProbe(t, func(t *testing.T, opt Options) {
					opt.Detail.Funcs = regexp.MustCompile(".")
					opt.Detail.Rule = detail.Rule{SlowNs: rule.slowNs, If: rule.cond, Limit: 1 << 20}
					r, _ := recordWorkload(t, name, opt)
					checkExpected(t, name, r)
					p := r.Profile
					for _, th := range p.Threads {
						var calls, kept int64
						for _, n := range th.Nodes {
							calls += n.Calls
						}
						for _, tr := range th.Trees {
							for _, c := range tr.Calls {
								if !c.Flags.Has(model.DetailKept) || c.Flags.Has(model.DetailInFlight) {
									continue
								}
								kept++
								if !c.Flags.Has(model.DetailArgs) {
									t.Errorf("thread %d: a kept call of %s without its arguments (flags %b)", th.Tid, p.FuncName(c.Func), c.Flags)
									continue
								}
								fn := p.FuncName(c.Func)
								if name == "unusual" && opt.Probes == ProbesInline && (strings.HasPrefix(fn, "ljmp_") || strings.HasPrefix(fn, "exc::thrower_")) {
									want := map[bool]int32{true: 0, false: 1}[c.Flags.Has(model.DetailReturned)]
									if int32(c.Args[0]) != want {
										t.Errorf("%s: arg0 %d, want %d (flags %b)", fn, int32(c.Args[0]), want, c.Flags)
									}
								}
							}
						}
						if want := map[bool]int64{false: 0, true: calls}[rule.all]; kept != want {
							t.Errorf("thread %d: %d calls kept in detail, want %d", th.Tid, kept, want)
						}
					}
				})
			})
		}
	}
}

// Enough calls for the inline rings to wrap many times with three-slot
// entries (rec and leaf selected; 20,000 iterations: 240,000 calls; 1,000
// with trap probes), with a rule that keeps every leaf whose argument is 1
// (one an iteration through rec(1), one every 7th iteration directly):
// exact counts, and exactly those calls kept, with their ancestors.
func TestDetailOnHotFunctionsWrapsTheRings(t *testing.T) {
	forEachProbe(t, func(t *testing.T, opt Options) {
		c, err := detail.ParseCond("arg0==1")
		if err != nil {
			t.Fatal(err)
		}
		opt.Detail.Funcs = regexp.MustCompile("^(rec|leaf)$")
		opt.Detail.Rule = detail.Rule{If: &c, Limit: 1 << 20}
		n := 20000
		if opt.Probes == ProbesTrap {
			n = 1000
		}
		r, _ := recordWorkload(t, "recursion", opt, fmt.Sprint(n))
		got := observe(r.Profile).Functions
		for name, want := range map[string]uint64{"main": 1, "run": 1, "rec": uint64(10 * n), "leaf": uint64(2 * n)} {
			if got[name].Calls != want {
				t.Errorf("%s: %d calls, want %d", name, got[name].Calls, want)
			}
		}
		th := r.Profile.Threads[0]
		direct, nested := 0, 0
		for i, tr := range th.Trees {
			last := tr.Calls[len(tr.Calls)-1]
			if r.Profile.FuncName(last.Func) != "leaf" || !last.Flags.Has(model.DetailKept) || last.Args[0] != 1 || last.Ret != 3 {
				t.Fatalf("tree %d ends in %s %+v, want a kept leaf(1) = 3", i, r.Profile.FuncName(last.Func), last)
			}
			switch len(tr.Calls) {
			case 3: // main, run, leaf
				direct++
			case 13: // main, run, rec x 10 (selected, kept as ancestors), leaf
				nested++
			default:
				t.Fatalf("tree %d has %d calls", i, len(tr.Calls))
			}
		}
		if want := (n + 5) / 7; direct != want || nested != n {
			t.Errorf("%d direct and %d nested leaf(1) trees, want %d and %d", direct, nested, want, n)
		}
	})
}

// A selected function that tail-calls another one (reload's tail jumps
// into leaf): the tail call ends tail's frame, kept without a return
// value, and leaf's return ends leaf's. Each is kept with its own
// arguments, which under --slow the inline stubs send from their side
// records: tail's at leaf's entry, leaf's from the shadow entry it
// takes over from tail.
func TestDetailAcrossTailCalls(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "reload")
	if out, err := exec.Command("gcc", "-O2", "-o", bin, "testdata/reload.c", "-ldl").CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	plugin, err := workload.Path("libplugin.so")
	if err != nil {
		t.Fatal(err)
	}
	for _, slowNs := range []int64{0, 1} {
		t.Run(fmt.Sprintf("slow=%dns", slowNs), func(t *testing.T) {
			forEachProbe(t, func(t *testing.T, opt Options) {
				opt.Detail.Funcs = regexp.MustCompile("^(tail|leaf)$")
				opt.Detail.Rule = detail.Rule{SlowNs: slowNs, Limit: 100}
				var out bytes.Buffer
				r, err := recordTo(context.Background(), []string{bin, plugin}, opt, &out)
				if err != nil {
					t.Fatal(err)
				}
				p := r.Profile
				var got []string
				for _, tr := range p.Threads[0].Trees {
					c := tr.Calls[len(tr.Calls)-1]
					s := fmt.Sprintf("%s(%d)", p.FuncName(c.Func), int32(c.Args[0]))
					if !c.Flags.Has(model.DetailKept | model.DetailArgs) {
						s += fmt.Sprintf(" flags %b", c.Flags)
					}
					if c.Flags.Has(model.DetailReturned) {
						s += fmt.Sprintf(" = %d", int32(c.Ret))
					}
					got = append(got, s)
				}
				want := "tail(1) leaf(2) = 6 tail(2) leaf(3) = 9"
				if g := strings.Join(got, " "); g != want {
					t.Errorf("kept calls: %s, want %s", g, want)
				}
			})
		})
	}
}

// --detail-if conditions of every type and operator on recursion's rec
// and leaf (arguments 0-10, returns 1-57): the calls kept are exactly
// those detail.Cond says hold, each with its arguments. Under inline
// probes the stubs judge the condition themselves (at the entry for an
// argument, at the return for rax) to decide whether to send the
// arguments; a disagreement with the tracer would keep a call without
// them or miss one.
func TestDetailConditionsInTheStubs(t *testing.T) {
	const iterations = 100
	type call struct {
		fn       string
		arg, ret uint64
	}
	var calls []call
	for i := 0; i < iterations; i++ {
		r := uint64(3)
		calls = append(calls, call{"leaf", 1, 3})
		for k := uint64(1); k <= 10; k++ {
			if k > 1 {
				r += k
			}
			calls = append(calls, call{"rec", k, r})
		}
		x := uint64(i % 7)
		calls = append(calls, call{"leaf", x, 2*x + 1})
	}
	conds := []string{"arg0==1", "arg0>=8", "arg0/u32<3", "arg0/i64!=5", "arg0/u64>4", "arg0>-1", "arg0/u32>-1",
		"arg0<=0", "ret<8", "ret/u64<=5", "ret/u32>30", "ret/i64==57", "ret!=3", "ret>=-2",
		"ret/u64<0xffffffffffffffff", "arg0/u64>=0x8000000000000000"}
	for _, text := range conds {
		t.Run(text, func(t *testing.T) {
			c, err := detail.ParseCond(text)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]int{}
			for _, k := range calls {
				args := [6]uint64{k.arg}
				if c.Holds(&args, k.ret, true) {
					want[k.fn]++
				}
			}
			forEachProbe(t, func(t *testing.T, opt Options) {
				opt.Detail.Funcs = regexp.MustCompile("^(rec|leaf)$")
				opt.Detail.Rule = detail.Rule{If: &c, Limit: 1 << 20}
				r, _ := recordWorkload(t, "recursion", opt, fmt.Sprint(iterations))
				p := r.Profile
				got := map[string]int{}
				for _, tr := range p.Threads[0].Trees {
					for _, k := range tr.Calls {
						if !k.Flags.Has(model.DetailKept) {
							continue
						}
						got[p.FuncName(k.Func)]++
						if args := [6]uint64{k.Args[0]}; !k.Flags.Has(model.DetailArgs) || !c.Holds(&args, k.Ret, true) {
							t.Errorf("kept %s(%d) = %d, flags %b: want its arguments, meeting %s", p.FuncName(k.Func), k.Args[0], k.Ret, k.Flags, text)
						}
					}
				}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("kept %v, want %v", got, want)
				}
			})
		})
	}
}

// A selected call still running at the detach, having lasted --slow, is
// kept with its arguments under both probe kinds: the trap probes read
// them at its entry; the inline stubs keep them in a side record until
// the call ends, and the detach reads them from there.
func TestDetailKeepsACallRunningAtDetach(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "stuck")
	if out, err := exec.Command("gcc", "-O2", "-g", "-o", bin, "testdata/stuck.c").CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	forEachProbe(t, func(t *testing.T, opt Options) {
		opt.Detail.Funcs = regexp.MustCompile("^(stuck|quick)$")
		opt.Detail.Rule = detail.Rule{SlowNs: 20e6, Limit: 100}
		cmd, stdin, lines := startReady(t, bin)
		stop := attachRunning(t, cmd.Process.Pid, opt)
		fmt.Fprintln(stdin, "go")
		if !lines.Scan() || lines.Text() != "stuck" {
			t.Fatalf("second line %q, want stuck", lines.Text())
		}
		time.Sleep(50 * time.Millisecond)
		r, err := stop()
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintln(stdin, "on")
		if !lines.Scan() || lines.Text() != "done 5757" {
			t.Errorf("the target after the detach printed %q, want done 5757", lines.Text())
		}
		if err := cmd.Wait(); err != nil {
			t.Errorf("the target after the detach: %v", err)
		}
		p := r.Profile
		var got []string
		for _, tr := range p.Threads[0].Trees {
			for _, c := range tr.Calls {
				got = append(got, fmt.Sprintf("%s@%d(%d, %d) %b", p.FuncName(c.Func), c.Depth, c.Args[0], c.Args[1], c.Flags))
			}
		}
		// main: in flight and still open (no arguments, not kept); stuck:
		// kept, with its arguments, still open.
		want := fmt.Sprintf("main@0(0, 0) %b stuck@1(7, 700) %b",
			model.DetailInFlight|model.DetailOpen, model.DetailKept|model.DetailArgs|model.DetailOpen)
		if g := strings.Join(got, " "); g != want {
			t.Errorf("trees: %s, want %s", g, want)
		}
	})
}
