package session

import (
	"fmt"
	"math/rand"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/profile-dev/profile/detail"
	"github.com/profile-dev/profile/model"
)

// Detail recording follows a thread lazily when the inline stubs gate the
// arguments (Rule.Gated: only a call that meets the rule sends them,
// before the event that closes it), eagerly when every selected call
// brings its arguments at entry (trap probes). Random call sequences
// (calls, returns, tail calls, frames left by a longjmp, in-flight frames
// at the start) played both ways keep the same trees, for a rule on time
// and for one on an argument. Gated, only kept calls have their arguments
// (an ancestor that did not meet the rule shows none: docs/trees.md), so
// the eager trees are compared without the others'.
func TestDetailLazyKeepsWhatEagerKeeps(t *testing.T) {
	arg0, err := detail.ParseCond("arg0>5")
	if err != nil {
		t.Fatal(err)
	}
	ret, err := detail.ParseCond("ret==1")
	if err != nil {
		t.Fatal(err)
	}
	rules := []struct {
		name string
		rule detail.Rule
	}{
		{"slow", detail.Rule{SlowNs: 30}},
		{"arg0>5", detail.Rule{If: &arg0}},
		{"ret==1 and slow", detail.Rule{SlowNs: 10, If: &ret}},
		{"limit", detail.Rule{SlowNs: 20, Limit: 3}},
	}
	for _, r := range rules {
		kept, left := 0, 0
		for seed := int64(1); seed <= 300; seed++ {
			prog := randomCalls(rand.New(rand.NewSource(seed)))
			eager, n := playDetail(prog, r.rule)
			lazyRule := r.rule
			lazyRule.Gated = true
			lazy, _ := playDetail(prog, lazyRule)
			if !reflect.DeepEqual(eager, lazy) {
				t.Fatalf("%s, seed %d: lazy trees\n%s\neager\n%s", r.name, seed, strings.Join(lazy, "\n"), strings.Join(eager, "\n"))
			}
			kept += n
			for _, c := range prog {
				if c.op == "longjmp" || c.op == "tail" {
					left++
				}
			}
		}
		// Not a test that passes on nothing: calls kept, frames left.
		if kept < 100 || left < 100 {
			t.Errorf("%s: %d calls kept, %d frames left in all: too few to compare", r.name, kept, left)
		}
	}
}

// call is one step of a random program: enter fn (tail: replacing the
// innermost frame), return from the innermost frame with rax, or leave
// frames by a longjmp to depth.
type call struct {
	op       string // "enter", "tail", "return", "longjmp"
	fn       int    // 1..5; 2 and 3 are selected
	args     [6]uint64
	rax      uint64
	depth    int
	duration int64 // time before the step
}

func randomCalls(r *rand.Rand) []call {
	var prog []call
	depth := 2 // two frames in flight at the start
	for len(prog) < 120 {
		c := call{duration: int64(r.Intn(12))}
		switch k := r.Intn(10); {
		case depth < 12 && k < 5:
			c.op, depth = "enter", depth+1
		case depth > 0 && k == 5:
			c.op = "tail"
		case depth > 1 && k == 6:
			c.op, c.depth = "longjmp", r.Intn(depth)
			depth = c.depth + 1 // and the call made there
		case depth > 0:
			c.op, depth = "return", depth-1
		default:
			continue
		}
		c.fn = 1 + r.Intn(5)
		c.args[0], c.rax = uint64(r.Intn(10)), uint64(r.Intn(3))
		prog = append(prog, c)
	}
	for ; depth > 0; depth-- {
		prog = append(prog, call{op: "return", duration: 3})
	}
	return prog
}

// playDetail plays prog on a session under rule. Gated, only the frames
// that meet the rule send their arguments, before the event that closes
// them, as the inline stubs do; else every selected entry brings them.
// It returns the thread's trees, as text, and how many calls were kept.
func playDetail(prog []call, rule detail.Rule) ([]string, int) {
	var now int64
	s := testSession(&now)
	s.SetDetail(regexp.MustCompile("^f[23]$"), &rule)
	p := s.NewProcess(ProcessInfo{Pid: pid, Exe: "/bin/prog"}, nil, model.None, nil)
	th := s.NewThread(pid, p, nil, model.None, "prog")
	fns := make([]int, 6)
	for i := 1; i <= 5; i++ {
		fns[i] = fn(s, fmt.Sprintf("f%d", i))
	}
	type open struct {
		sp       uint64
		fn       int
		args     [6]uint64
		start    int64
		inFlight bool // no side record: never sends its arguments
	}
	selected := func(f int) bool { return f == 2 || f == 3 }
	stack := []open{{sp: a, fn: 1, inFlight: true}, {sp: a - 0x20, fn: 2, inFlight: true}}
	for _, o := range stack {
		s.EnterInFlight(th, fns[o.fn], o.sp, 0x1000, 0)
	}
	below := func() uint64 { // the sp of a call from the innermost frame
		if len(stack) == 0 {
			return a
		}
		return stack[len(stack)-1].sp - 0x20
	}
	// closing sends the arguments of the frames from depth on that meet
	// the rule (gated), as the stubs do before the closing event.
	closing := func(depth int, rax uint64, returned bool) {
		if !rule.Gated {
			return
		}
		for k := len(stack) - 1; k >= depth; k-- {
			o := stack[k]
			ok := returned && k == len(stack)-1
			if o.inFlight || !selected(o.fn) || now-o.start < rule.SlowNs ||
				(rule.If != nil && !rule.If.Holds(&o.args, rax, ok)) {
				continue
			}
			args := o.args
			s.ArgsAt(th, o.sp, &args)
		}
	}
	for _, c := range prog {
		now += c.duration
		switch c.op {
		case "enter", "tail":
			sp := below()
			if c.op == "tail" {
				sp += 0x20
				closing(len(stack)-1, 0, false)
				stack = stack[:len(stack)-1]
			}
			s.Enter(th, fns[c.fn], model.KindDirect, sp, 0x2000, now)
			stack = append(stack, open{sp: sp, fn: c.fn, args: c.args, start: now})
			if !rule.Gated && selected(c.fn) {
				args := c.args
				s.Args(th, fns[c.fn], &args)
			}
		case "return":
			closing(len(stack)-1, c.rax, true)
			s.Return(th, stack[len(stack)-1].sp+8, c.rax, now)
			stack = stack[:len(stack)-1]
		case "longjmp":
			// Back in frame depth-1's body, which calls again: the frames
			// from depth on were left.
			closing(c.depth, 0, false)
			sp := stack[c.depth].sp
			stack = stack[:c.depth]
			s.Enter(th, fns[c.fn], model.KindDirect, sp, 0x3000, now)
			stack = append(stack, open{sp: sp, fn: c.fn, args: c.args, start: now})
			if !rule.Gated && selected(c.fn) {
				args := c.args
				s.Args(th, fns[c.fn], &args)
			}
		}
	}
	prof := s.Finish(now, Counters{})
	var out []string
	kept := 0
	for _, tr := range prof.Threads[0].Trees {
		for _, c := range tr.Calls {
			if !c.Flags.Has(model.DetailKept) {
				c.Args, c.NArgs, c.Flags = [6]uint64{}, 0, c.Flags&^model.DetailArgs
			}
			out = append(out, fmt.Sprintf("%*s%s [%d,%d] %v/%d =%d %b", 2*c.Depth, "", prof.Functions[c.Func].Name,
				c.StartNs, c.EndNs, c.Args[:1], c.NArgs, c.Ret, c.Flags))
			if c.Flags.Has(model.DetailKept) {
				kept++
			}
		}
		out = append(out, "--")
	}
	return out, kept
}
