package session

import (
	"reflect"
	"strings"
	"testing"

	"github.com/profile-dev/profile/instrument"
	"github.com/profile-dev/profile/model"
)

// The scripted address space: a thread stack and a sigaltstack.
const (
	stackLo, stackHi = 0x7ff000000, 0x7ff100000
	altLo, altHi     = 0x10000000, 0x10010000
	pid              = 100
)

// testSession is a session with a scripted clock and mappings.
func testSession(now *int64) *Session {
	s := New(model.Meta{})
	s.clock = func() int64 { return *now }
	s.readMaps = func(int) ([]instrument.Mapping, error) {
		return []instrument.Mapping{{Start: altLo, End: altHi}, {Start: stackLo, End: stackHi}}, nil
	}
	return s
}

// fn interns a function of the main module by name.
func fn(s *Session, name string) int {
	return s.Interner().Func(s.Interner().Module("/bin/prog", ""), name)
}

// ev is one scripted event: Enter ("enter"), EnterInFlight ("inflight")
// or Return ("return").
type ev struct {
	op      string
	fn      string
	sp, ret uint64
	at      int64
	want    uint64 // Return's result
}

// want is one CCT node, by its path from START ("main/f").
type want struct {
	calls, rc, inFlight, self, total int64
}

// nodes indexes t's nodes by path, START being "".
func nodes(p *model.Profile, t int) map[string]model.Node {
	ns := p.Threads[t].Nodes
	out := map[string]model.Node{}
	var path func(i int) string
	path = func(i int) string {
		if ns[i].Parent == model.None {
			return ""
		}
		if pp := path(ns[i].Parent); pp != "" {
			return pp + "/" + p.Functions[ns[i].Func].Name
		}
		return p.Functions[ns[i].Func].Name
	}
	for i, n := range ns {
		out[path(i)] = n
	}
	return out
}

func check(t *testing.T, p *model.Profile, th int, wants map[string]want) {
	t.Helper()
	got := nodes(p, th)
	if len(got) != len(wants) {
		t.Errorf("%d nodes %v, want %d", len(got), keys(got), len(wants))
	}
	for path, w := range wants {
		n, ok := got[path]
		if !ok {
			t.Errorf("no node %q", path)
			continue
		}
		g := want{n.Calls, n.RecursiveCalls, n.InFlight, n.SelfNs, n.TotalNs}
		if g != w {
			t.Errorf("node %q = %+v, want %+v", path, g, w)
		}
	}
}

func keys(m map[string]model.Node) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// run plays events on a fresh thread started at 0 and finishes it at end.
// It returns the functions still open before the end.
func run(t *testing.T, evs []ev, end int64) (*Session, *model.Profile, []string) {
	t.Helper()
	var now int64
	s := testSession(&now)
	p := s.NewProcess(ProcessInfo{Pid: pid, Exe: "/bin/prog"}, nil, model.None, nil)
	th := s.NewThread(pid, p, nil, model.None, "prog")
	for i, e := range evs {
		now = e.at
		switch e.op {
		case "enter":
			s.Enter(th, fn(s, e.fn), model.KindDirect, e.sp, e.ret, e.at)
		case "inflight":
			s.EnterInFlight(th, fn(s, e.fn), e.sp, e.ret, e.at)
		case "return":
			if got := s.Return(th, e.sp, 0, e.at); got != e.want {
				t.Errorf("event %d: Return = %#x, want %#x", i, got, e.want)
			}
		}
	}
	now = end
	open := names(s, s.Stack(th))
	return s, s.Finish(end, Counters{}), open
}

func names(s *Session, fns []int) []string {
	var out []string
	for _, f := range fns {
		out = append(out, s.Profile().Functions[f].Name)
	}
	return out
}

const (
	a = stackHi - 0x100 // main's entry sp
	b = a - 0x40        // one level deeper
	c = b - 0x40        // two levels deeper
	x = altHi - 0x100   // on the sigaltstack
)

func TestEvents(t *testing.T) {
	tests := []struct {
		name  string
		evs   []ev
		end   int64
		calls int64 // TracedCalls
		stack []string
		wants map[string]want
	}{{
		name: "nested calls",
		evs: []ev{
			{op: "enter", fn: "main", sp: a, ret: 0x11, at: 10},
			{op: "enter", fn: "f", sp: b, ret: 0x22, at: 20},
			{op: "return", sp: b + 8, at: 50, want: 0x22},
			{op: "enter", fn: "f", sp: b, ret: 0x22, at: 60},
			{op: "return", sp: b + 8, at: 70, want: 0x22},
			{op: "return", sp: a + 8, at: 100, want: 0x11},
		},
		end: 200, calls: 3,
		wants: map[string]want{
			"":       {self: 110},
			"main":   {calls: 1, self: 50, total: 90},
			"main/f": {calls: 2, self: 40, total: 40},
		},
	}, {
		name: "return site without a frame",
		evs: []ev{
			{op: "enter", fn: "main", sp: a, ret: 0x11, at: 0},
			{op: "return", sp: c, at: 5, want: 0},   // below every frame
			{op: "return", sp: a, at: 6, want: 0},   // at main's sp: not returned yet
			{op: "return", sp: x, at: 7, want: 0},   // another stack
			{op: "return", sp: 0x5, at: 8, want: 0}, // no stack known
		},
		end: 20, calls: 1, stack: []string{"main"},
		wants: map[string]want{"": {}, "main": {calls: 1, self: 20, total: 20}},
	}, {
		name: "tail call closes the caller at entry",
		evs: []ev{
			{op: "enter", fn: "main", sp: a, ret: 0x11, at: 0},
			{op: "enter", fn: "f", sp: b, ret: 0x22, at: 10},
			{op: "enter", fn: "g", sp: b, ret: 0x22, at: 30}, // f jumps to g
			{op: "return", sp: b + 8, at: 45, want: 0x22},
		},
		end: 50, calls: 3, stack: []string{"main"},
		wants: map[string]want{
			"":       {},
			"main":   {calls: 1, self: 15, total: 50},
			"main/f": {calls: 1, self: 20, total: 20},
			"main/g": {calls: 1, self: 15, total: 15},
		},
	}, {
		name: "longjmp: the next entry closes abandoned frames",
		evs: []ev{
			{op: "enter", fn: "main", sp: a, ret: 0x11, at: 0},
			{op: "enter", fn: "f", sp: b, ret: 0x22, at: 10},
			{op: "enter", fn: "g", sp: c, ret: 0x33, at: 20},
			{op: "enter", fn: "h", sp: b, ret: 0x22, at: 40}, // main calls h after longjmp
		},
		end: 100, calls: 4, stack: []string{"main", "h"},
		wants: map[string]want{
			"":         {},
			"main":     {calls: 1, self: 10, total: 100},
			"main/f":   {calls: 1, self: 10, total: 30},
			"main/f/g": {calls: 1, self: 20, total: 20},
			"main/h":   {calls: 1, self: 60, total: 60},
		},
	}, {
		name: "longjmp: one return closes several frames",
		evs: []ev{
			{op: "enter", fn: "main", sp: a, ret: 0x11, at: 0},
			{op: "enter", fn: "f", sp: b, ret: 0x22, at: 10},
			{op: "enter", fn: "g", sp: c, ret: 0x33, at: 20},
			{op: "return", sp: b + 8, at: 40, want: 0x22}, // g unwound, f returns
		},
		end: 60, calls: 3, stack: []string{"main"},
		wants: map[string]want{
			"":         {},
			"main":     {calls: 1, self: 30, total: 60},
			"main/f":   {calls: 1, self: 10, total: 30},
			"main/f/g": {calls: 1, self: 20, total: 20},
		},
	}, {
		name: "recursion",
		evs: []ev{
			{op: "enter", fn: "f", sp: a, ret: 0x11, at: 0},
			{op: "enter", fn: "f", sp: b, ret: 0x22, at: 10},
			{op: "enter", fn: "f", sp: c, ret: 0x22, at: 20},
			{op: "return", sp: c + 8, at: 30, want: 0x22},
			{op: "return", sp: b + 8, at: 40, want: 0x22},
			{op: "return", sp: a + 8, at: 50, want: 0x11},
		},
		end: 50, calls: 3,
		wants: map[string]want{
			"":      {},
			"f":     {calls: 1, self: 20, total: 50},
			"f/f":   {calls: 1, rc: 1, self: 20},
			"f/f/f": {calls: 1, rc: 1, self: 10},
		},
	}, {
		name: "signal handler on a sigaltstack returns",
		evs: []ev{
			{op: "enter", fn: "main", sp: a, ret: 0x11, at: 0},
			{op: "enter", fn: "f", sp: b, ret: 0x22, at: 10},
			{op: "enter", fn: "handler", sp: x, ret: 0x44, at: 20}, // above b, another stack
			{op: "return", sp: b - 0x1000, at: 25, want: 0},        // main stack: handler untouched
			{op: "return", sp: x + 8, at: 30, want: 0x44},
			{op: "return", sp: b + 8, at: 40, want: 0x22},
		},
		end: 50, calls: 3, stack: []string{"main"},
		wants: map[string]want{
			"":               {},
			"main":           {calls: 1, self: 20, total: 50},
			"main/f":         {calls: 1, self: 20, total: 30},
			"main/f/handler": {calls: 1, self: 10, total: 10},
		},
	}, {
		name: "siglongjmp out of a sigaltstack handler",
		evs: []ev{
			{op: "enter", fn: "main", sp: a, ret: 0x11, at: 0},
			{op: "enter", fn: "f", sp: b, ret: 0x22, at: 10},
			{op: "enter", fn: "handler", sp: x, ret: 0x44, at: 20},
			{op: "return", sp: b + 8, at: 40, want: 0x22}, // f's frame closes: the handler's too
		},
		end: 50, calls: 3, stack: []string{"main"},
		wants: map[string]want{
			"":               {},
			"main":           {calls: 1, self: 20, total: 50},
			"main/f":         {calls: 1, self: 10, total: 30},
			"main/f/handler": {calls: 1, self: 20, total: 20},
		},
	}, {
		name: "in-flight frames are timed, not counted",
		evs: []ev{
			{op: "inflight", fn: "main", sp: a, ret: 0x11, at: 0},
			{op: "inflight", fn: "poll", sp: b, ret: 0x22, at: 0},
			{op: "return", sp: b + 8, at: 30, want: 0x22},
			{op: "enter", fn: "work", sp: b, ret: 0x22, at: 40},
			{op: "return", sp: b + 8, at: 45, want: 0x22},
		},
		end: 50, calls: 1, stack: []string{"main"},
		wants: map[string]want{
			"":          {},
			"main":      {inFlight: 1, self: 15, total: 50},
			"main/poll": {inFlight: 1, self: 30, total: 30},
			"main/work": {calls: 1, self: 5, total: 5},
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, p, open := run(t, tt.evs, tt.end)
			if !reflect.DeepEqual(open, tt.stack) {
				t.Errorf("open stack %v, want %v", open, tt.stack)
			}
			check(t, p, 0, tt.wants)
			if s.TracedCalls() != tt.calls || p.Meta.TracedCalls != tt.calls {
				t.Errorf("TracedCalls = %d, Meta %d, want %d", s.TracedCalls(), p.Meta.TracedCalls, tt.calls)
			}
			if p.Threads[0].TracedNs != tt.end {
				t.Errorf("TracedNs = %d, want %d", p.Threads[0].TracedNs, tt.end)
			}
		})
	}
}

// TestForked: a forked child starts with the parent's open frames timed
// from the fork, no calls counted; its frames close by stack pointer as
// the parent's would; the parent is not affected.
func TestForked(t *testing.T) {
	var now int64
	s := testSession(&now)
	p := s.NewProcess(ProcessInfo{Pid: pid, Exe: "/bin/prog"}, nil, model.None, nil)
	parent := s.NewThread(pid, p, nil, model.None, "prog")
	s.Enter(parent, fn(s, "main"), model.KindDirect, a, 0x11, 0)
	s.Enter(parent, fn(s, "spawn"), model.KindDirect, b, 0x22, 10)
	s.Enter(parent, fn(s, "fork"), model.KindPLT, c, 0x33, 20)
	if sp := s.Spawner(parent); sp != fn(s, "spawn") {
		t.Errorf("Spawner = %d, want spawn", sp)
	}

	now = 30
	cp := s.NewProcess(ProcessInfo{Pid: pid + 1, Exe: "/bin/prog"}, parent, s.Spawner(parent), nil)
	child := s.NewThread(pid+1, cp, parent, model.None, "prog")
	s.Forked(parent, child, 30)
	if got := names(s, s.Stack(child)); !reflect.DeepEqual(got, []string{"main", "spawn", "fork"}) {
		t.Errorf("child stack %v", got)
	}
	if got := s.Return(child, c+8, 0, 40); got != 0x33 { // fork returns 0 in the child
		t.Errorf("child Return = %#x, want 0x33", got)
	}
	if got := s.Return(child, a+8, 0, 70); got != 0x11 {
		t.Errorf("child Return = %#x, want 0x11", got)
	}
	s.FinishThread(child, "", 100)
	s.ProcessEnded(cp, true, 3, "")
	s.Return(parent, c+8, 0, 50)
	s.Return(parent, b+8, 0, 60)
	p2 := s.Finish(100, Counters{Stops: 7, Breakpoints: 2})

	check(t, p2, 0, map[string]want{
		"":                {},
		"main":            {calls: 1, self: 50, total: 100},
		"main/spawn":      {calls: 1, self: 20, total: 50},
		"main/spawn/fork": {calls: 1, self: 30, total: 30},
	})
	check(t, p2, 1, map[string]want{
		"":                {self: 30},
		"main":            {inFlight: 1, self: 0, total: 40},
		"main/spawn":      {inFlight: 1, self: 30, total: 40},
		"main/spawn/fork": {inFlight: 1, self: 10, total: 10},
	})
	if p2.Threads[1].TracedNs != 70 {
		t.Errorf("child traced %d ns, want 70", p2.Threads[1].TracedNs)
	}
	wantProc := model.Process{Pid: pid + 1, Parent: 0, ParentPid: pid, ForkedBy: fn(s, "spawn"), ForkedByTid: pid,
		ExecOf: model.None, Exe: "/bin/prog", Exited: true, ExitCode: 3}
	if !reflect.DeepEqual(p2.Processes[1], wantProc) {
		t.Errorf("child process %+v, want %+v", p2.Processes[1], wantProc)
	}
	// Another process: the child starts at level 0 with no parent tid.
	if th := p2.Threads[1]; th.Level != 0 || th.ParentTid != 0 || th.Process != 1 {
		t.Errorf("child thread %+v", th)
	}
	if m := p2.Meta; m.TracedCalls != 3 || m.Stops != 7 || m.Breakpoints != 2 || m.DurationNs != 100 {
		t.Errorf("meta counters %d %d %d %d", m.TracedCalls, m.Stops, m.Breakpoints, m.DurationNs)
	}
}

// TestSnapshot: a snapshot closes nothing; the session goes on and its
// final profile counts what came after.
func TestSnapshot(t *testing.T) {
	var now int64
	s := testSession(&now)
	p := s.NewProcess(ProcessInfo{Pid: pid, Exe: "/bin/prog", Argv: []string{"prog", "-x"}}, nil, model.None, nil)
	th := s.NewThread(pid, p, nil, model.None, "prog")
	gone := s.NewThread(pid+1, p, th, fn(s, "main"), "worker")
	s.FinishThread(gone, "w2", 5)
	s.FinishThread(gone, "w3", 9) // idempotent
	s.Enter(th, fn(s, "main"), model.KindDirect, a, 0x11, 0)
	s.Enter(th, fn(s, "f"), model.KindDirect, b, 0x22, 10)

	snap := s.Snapshot(40, Counters{Stops: 5})
	check(t, snap, 0, map[string]want{
		"":       {},
		"main":   {calls: 1, self: 10, total: 40},
		"main/f": {calls: 1, self: 30, total: 30},
	})
	if snap.Meta.DurationNs != 40 || snap.Meta.TracedCalls != 2 || snap.Meta.Stops != 5 {
		t.Errorf("snapshot meta %+v", snap.Meta)
	}
	if n := len(s.Profile().Threads[0].Nodes); n != 0 {
		t.Errorf("the session's own thread got %d nodes from a snapshot", n)
	}

	s.Return(th, b+8, 0, 50)
	s.Enter(th, fn(s, "g"), model.KindIndirect, b, 0x22, 60)
	now = 80
	fin := s.Finish(80, Counters{Stops: 9, TracedCalls: 42})
	check(t, fin, 0, map[string]want{
		"":       {},
		"main":   {calls: 1, self: 20, total: 80},
		"main/f": {calls: 1, self: 40, total: 40},
		"main/g": {calls: 1, self: 20, total: 20},
	})
	if n := len(snap.Threads[0].Nodes); n != 3 {
		t.Errorf("snapshot changed by the session going on: %d nodes", n)
	}
	if th := fin.Threads[1]; th.Name != "w2" || th.TracedNs != 5 || th.Level != 1 || th.ParentTid != pid || th.SpawnedBy != fn(s, "main") {
		t.Errorf("worker %+v", th)
	}
	if m := fin.Meta; m.TracedCalls != 42 || m.Stops != 9 || m.Exe != "/bin/prog" || !reflect.DeepEqual(m.Command, []string{"prog", "-x"}) {
		t.Errorf("final meta %+v", m)
	}
	if p.Alive != 0 {
		t.Errorf("Alive = %d after Finish", p.Alive)
	}
}

func TestCrash(t *testing.T) {
	var now int64
	s := testSession(&now)
	p := s.NewProcess(ProcessInfo{Pid: pid}, nil, model.None, nil)
	th := s.NewThread(pid, p, nil, model.None, "prog")
	s.Enter(th, fn(s, "main"), model.KindDirect, a, 0x11, 0)
	s.Enter(th, fn(s, "f"), model.KindDirect, b, 0x22, 0)
	s.Crash(th, "SIGSEGV", 0x8, "prog:f+0x4")
	m := s.Profile().Meta
	want := &model.Crash{Pid: pid, Tid: pid, Signal: "SIGSEGV", Addr: 0x8, Stack: []string{"prog:f+0x4", "prog:f", "prog:main"}}
	if !reflect.DeepEqual(m.Crash, want) || !m.Partial || !strings.Contains(m.PartialReason, "SIGSEGV") {
		t.Errorf("crash %+v, partial %v %q", m.Crash, m.Partial, m.PartialReason)
	}
}

func TestLifecycle(t *testing.T) {
	var now int64
	s := testSession(&now)
	p := s.NewProcess(ProcessInfo{Pid: pid, Exe: "/bin/dash", Argv: []string{"sh", "-c"}, Comm: "sh"}, nil, model.None, nil)
	lead := s.NewThread(pid, p, nil, model.None, "sh")
	other := s.NewThread(pid+1, p, nil, model.None, "sh")
	s.SetLevel(other, 1, pid)
	s.Enter(lead, fn(s, "pthread_create"), model.KindPLT, a, 0x11, 0)
	if sp := s.Spawner(lead); sp != model.None {
		t.Errorf("Spawner = %d, want None: creation calls are skipped", sp)
	}
	kid := s.NewThread(pid+2, p, other, model.None, "sh")
	if kid.Level != 2 || p.Alive != 3 {
		t.Errorf("kid level %d, alive %d", kid.Level, p.Alive)
	}
	s.FinishThread(lead, "", 10)
	s.FinishThread(other, "", 10)
	s.FinishThread(kid, "", 10)
	s.ProcessEnded(p, false, 0, "SIGKILL")
	np := s.NewProcess(ProcessInfo{Pid: pid, Exe: "/bin/prog", Comm: "prog"}, nil, model.None, p)
	s.NewThread(pid, np, nil, model.None, "prog")
	s.Warn("careful")
	prof := s.Finish(20, Counters{})
	if pr := prof.Processes[1]; pr.ExecOf != 0 || pr.Parent != model.None || pr.Pid != pid {
		t.Errorf("exec'd image %+v", pr)
	}
	if prof.Processes[0].Signal != "SIGKILL" || prof.Processes[0].Exited {
		t.Errorf("first image %+v", prof.Processes[0])
	}
	if th := prof.Threads[1]; th.Level != 1 || th.ParentTid != pid {
		t.Errorf("thread found at attach %+v", th)
	}
	if th := prof.Threads[3]; th.Process != 1 || th.TracedNs != 20 || th.Name != "prog" {
		t.Errorf("exec'd thread %+v", th)
	}
	// The run is named after its first image, as it was started: the
	// exec'd image keeps its own names.
	if m := prof.Meta; m.Exe != "/bin/dash" || m.Comm != "sh" || m.StartedAs() != "sh (/bin/dash)" ||
		prof.Processes[1].Comm != "prog" || prof.Processes[1].StartedAs() != "/bin/prog" {
		t.Errorf("names: meta exe %q comm %q (%q), exec'd image %+v", m.Exe, m.Comm, m.StartedAs(), prof.Processes[1])
	}
	if prof.Meta.Exe != "/bin/dash" || !reflect.DeepEqual(prof.Meta.Warnings, []string{"careful"}) {
		t.Errorf("meta %+v", prof.Meta)
	}
}

// TestWarnOnceWithCount: a warning given again is listed once, with how
// often it was given, in its first place; a snapshot taken before keeps
// what it had.
func TestWarnOnceWithCount(t *testing.T) {
	s := New(model.Meta{Exe: "/bin/sh"})
	s.Warn("env has no symbol table")
	s.Warn("other")
	before := s.Snapshot(1, Counters{})
	s.Warn("env has no symbol table")
	s.Warn("env has no symbol table")
	want := []string{"env has no symbol table (3 times)", "other"}
	if got := s.Finish(2, Counters{}).Meta.Warnings; !reflect.DeepEqual(got, want) {
		t.Errorf("warnings %q, want %q", got, want)
	}
	if got := before.Meta.Warnings; !reflect.DeepEqual(got, []string{"env has no symbol table", "other"}) {
		t.Errorf("snapshot's warnings changed to %q", got)
	}
}
