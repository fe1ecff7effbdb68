package detail

import (
	"fmt"
	"strings"
	"testing"

	"github.com/profile-dev/profile/model"
)

// step is one scripted event: enter fn (selected when it starts with
// "s"), with arg0; or exit with rax (left: by longjmp).
type step struct {
	enter string
	arg0  uint64
	exit  bool
	ret   uint64
	left  bool
	at    int64
}

func in(fn string, at int64) step              { return step{enter: fn, at: at} }
func inArg(fn string, a uint64, at int64) step { return step{enter: fn, arg0: a, at: at} }
func out(ret uint64, at int64) step            { return step{exit: true, ret: ret, at: at} }
func leave(at int64) step                      { return step{exit: true, left: true, at: at} }

// trees renders a thread's trees as "fn@depth[start,end]flags" lists, one
// tree a line; flags: K kept, A args, R returned, O open.
func trees(ts []model.DetailTree, names []string) string {
	var lines []string
	for _, tr := range ts {
		var calls []string
		for _, c := range tr.Calls {
			f := ""
			for _, x := range []struct {
				f model.DetailFlags
				c string
			}{{model.DetailKept, "K"}, {model.DetailArgs, "A"}, {model.DetailReturned, "R"}, {model.DetailOpen, "O"}} {
				if c.Flags.Has(x.f) {
					f += x.c
				}
			}
			calls = append(calls, fmt.Sprintf("%s@%d[%d,%d]%s", names[c.Func], c.Depth, c.StartNs, c.EndNs, f))
		}
		lines = append(lines, strings.Join(calls, " "))
	}
	return strings.Join(lines, "\n")
}

func run(rule Rule, steps []step, end int64) (string, int64, *Thread) {
	var names []string
	ids := map[string]int{}
	th := NewThread(&rule)
	for _, s := range steps {
		if !s.exit {
			id, ok := ids[s.enter]
			if !ok {
				id = len(names)
				ids[s.enter] = id
				names = append(names, s.enter)
			}
			th.Enter(id, s.at, strings.HasPrefix(s.enter, "s"))
			th.SetArgsAt(th.Depth()-1, &[6]uint64{s.arg0}, 1)
			continue
		}
		th.Exit(s.at, s.ret, !s.left)
	}
	ts, dropped := th.Finish(end)
	return trees(ts, names), dropped, th
}

func TestThreadKeepsInterestingCallsAndAncestors(t *testing.T) {
	slow := Rule{SlowNs: 10}
	retNeg, err := ParseCond("ret<0")
	if err != nil {
		t.Fatal(err)
	}
	arg7, err := ParseCond("arg0==7")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		rule    Rule
		steps   []step
		want    string
		dropped int64
	}{
		{"a fast call is pruned, with its children", slow, []step{
			in("main", 0), in("sreq", 1), in("child", 2), out(0, 3), out(0, 5), out(0, 6),
		}, "", 0},
		{"a slow call keeps its ancestors, not its unselected children", slow, []step{
			in("main", 0), in("loop", 1), in("sreq", 2), in("child", 3), out(0, 4), out(7, 20), out(0, 30), out(0, 31),
		}, "main@0[0,31]R loop@1[1,30]R sreq@2[2,20]KAR", 0},
		{"an inner kept call keeps its selected parent, unkept", Rule{If: &arg7}, []step{
			in("main", 0), in("sreq", 1), in("x", 2), inArg("slookup", 7, 3), out(9, 15), out(0, 16), out(0, 17), out(0, 18),
		}, "main@0[0,18]R sreq@1[1,17]AR x@2[2,16]R slookup@3[3,15]KAR", 0},
		{"siblings: only the slow one, each its own tree", slow, []step{
			in("main", 0), in("sreq", 1), out(1, 2), in("sreq", 3), out(2, 30), in("sreq", 31), out(3, 32),
			in("sreq", 40), out(4, 60), out(0, 70),
		}, "main@0[0,70]R sreq@1[3,30]KAR\nmain@0[0,70]R sreq@1[40,60]KAR", 0},
		{"the limit drops the oldest trees", Rule{SlowNs: 10, Limit: 2}, []step{
			in("main", 0), inArg("sreq", 1, 1), out(0, 20), inArg("sreq", 2, 21), out(0, 40), inArg("sreq", 3, 41), out(0, 60), out(0, 61),
		}, "main@0[0,61]R sreq@1[21,40]KAR\nmain@0[0,61]R sreq@1[41,60]KAR", 1},
		{"a condition on the return value", Rule{If: &retNeg}, []step{
			in("main", 0), in("sreq", 1), out(5, 2), in("sreq", 3), out(0xffffffff, 4), out(0, 5),
		}, "main@0[0,5]R sreq@1[3,4]KAR", 0},
		{"a call left by longjmp has no return value", Rule{If: &retNeg}, []step{
			in("main", 0), in("sreq", 1), leave(2), out(0, 5),
		}, "", 0},
		{"a slow call still running at the end is kept, open", slow, []step{
			in("main", 0), in("sreq", 1), in("child", 2),
		}, "main@0[0,50]O sreq@1[1,50]KAO", 0},
		{"ancestors still running end at the end, open", slow, []step{
			in("main", 0), in("sreq", 1), out(0, 20),
		}, "main@0[0,50]O sreq@1[1,20]KAR", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, dropped, th := run(tc.rule, tc.steps, 50)
			if got != tc.want {
				t.Errorf("trees:\n%s\nwant:\n%s", got, tc.want)
			}
			if dropped != tc.dropped {
				t.Errorf("%d trees dropped, want %d", dropped, tc.dropped)
			}
			if len(th.elems) != 0 || len(th.stack) != 0 {
				t.Errorf("left %d elements, %d open calls", len(th.elems), len(th.stack))
			}
		})
	}
}

// Between requests, the array holds the open calls' placeholders only:
// memory does not grow with the calls pruned or kept.
func TestThreadArrayStaysBounded(t *testing.T) {
	th := NewThread(&Rule{SlowNs: 10, Limit: 5})
	th.Enter(0, 0, false)
	for i := range int64(100000) {
		at := 10 + i*100
		th.Enter(1, at, true)
		th.Enter(2, at+1, false)
		th.Exit(at+2, 0, true)
		th.Exit(at+3+(i%2)*20, 0, true)
		if len(th.elems) != 1 || len(th.stack) != 1 {
			t.Fatalf("call %d: %d elements, %d open calls, want 1, 1", i, len(th.elems), len(th.stack))
		}
	}
	if ts, dropped := th.Trees(1e9); len(ts) != 5 || dropped != 50000-5 {
		t.Errorf("%d trees, %d dropped; want 5, %d", len(ts), dropped, 50000-5)
	}
}

func TestCond(t *testing.T) {
	args := &[6]uint64{100, 0xffffffff, 5, 0, 0, 0x8000000000000000}
	cases := []struct {
		cond     string
		ret      uint64
		returned bool
		want     bool
	}{
		{"ret<0", 0xfffffffe, true, true},      // int -2 in eax, upper half zero
		{"ret/i64<0", 0xfffffffe, true, false}, // read as a 64-bit value
		{"ret/u32>4000000000", 0xfffffffe, true, true},
		{"ret==0", 0, false, false}, // left by longjmp: no value
		{"ret!=0", 1, true, true},
		{"arg0>100", 0, false, false},
		{"arg0>=100", 0, false, true},
		{"arg1==-1", 0, false, true},
		{"arg2<=0x5", 0, false, true},
		{"arg5/u64>0x7fffffffffffffff", 0, false, true},
		{"arg5/i64<0", 0, false, true},
		{" arg0 == 100 ", 0, false, true},
	}
	for _, tc := range cases {
		c, err := ParseCond(tc.cond)
		if err != nil {
			t.Fatalf("%q: %v", tc.cond, err)
		}
		if got := c.Holds(args, tc.ret, tc.returned); got != tc.want {
			t.Errorf("%q with ret %#x returned %v: %v, want %v", tc.cond, tc.ret, tc.returned, got, tc.want)
		}
	}
	for _, bad := range []string{"", "ret", "rax<0", "arg6>1", "ret<", "ret<x", "ret=0", "ret/f32<0", "arg0/u64>-1"} {
		if _, err := ParseCond(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
