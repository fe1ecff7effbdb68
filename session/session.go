// Package session turns call and lifecycle events into one profile
// (docs/design.md, Data flow): it owns the per-thread recorders, their open
// frames and the profile under construction. A probe (trap or inline)
// produces the events; nothing here issues ptrace requests.
package session

import (
	"fmt"
	"regexp"
	"slices"
	"time"

	"github.com/profile-dev/profile/detail"
	"github.com/profile-dev/profile/instrument"
	"github.com/profile-dev/profile/model"
)

// Session builds one model.Profile from events. Not safe for concurrent
// use: callers serialize.
type Session struct {
	prof        *model.Profile
	in          *model.Interner
	base        time.Time
	tracedCalls int64
	heldNs      int64
	stopNs      int64
	stops       int64
	live        map[*Thread]struct{} // threads not finished yet
	// warned: each warning's index in the profile's and how often it
	// was given.
	warned map[string][2]int

	// The checkpoint function (SetCheckpoint): whether a function is it,
	// and its returns so far.
	isCheckpoint perFunc[bool]
	checkpoints  int64

	// Detail recording (SetDetail): whether a function is selected, how
	// many argument registers its parameters take (SetArity), the rule.
	selected   perFunc[bool]
	nargs      perFunc[int]
	detailRule *detail.Rule
	detailLost int64

	// Tests script the clock and the mappings.
	clock    func() int64
	readMaps func(pid int) ([]instrument.Mapping, error)
}

// ProcessInfo describes a process image as the probe found it.
type ProcessInfo struct {
	Pid  int
	Exe  string
	Argv []string
	Comm string // the name it was exec'd by (model.Process.Comm)
	// Parent is the process's parent when it was already running when
	// tracing began and its parent is traced too (attach --tree): no
	// fork of it was seen.
	Parent *Process
}

// Process is one process image of the profile.
type Process struct {
	Pid   int
	Idx   int // into Profile().Processes
	Alive int // threads not finished yet
	Exe   string
}

// Thread is one thread of the profile.
type Thread struct {
	Tid   int
	Proc  *Process
	Idx   int // into Profile().Threads
	Level int

	rec    *model.Recorder
	frames []frame
	done   bool
	// det follows t's calls in detail (nil without detail recording).
	// Under a gated rule (detail.Rule.Gated: the probes send a call's
	// arguments only if it may be kept) it follows them lazily: only the
	// frames up to the innermost one that sent its arguments
	// (detailSync), as a call that sends none is not kept. Its open call
	// k is frames[k].
	det *detail.Thread

	// The stack mapping sp was last seen in: a signal handler on a
	// sigaltstack runs on another one.
	stackLo, stackHi uint64
	// imageGone: the memory the thread ran in is gone (it exec'd or
	// exited); its events still to come are looked up in no maps.
	imageGone bool
}

// frame is one open activation as the probe saw it: the stack pointer at
// entry (where the return address lies) and the return address; its
// function and entry time as the probe saw them, for detail recording's
// lazy start (the recorder's entry times move with Hold).
type frame struct {
	sp, ret uint64
	stack   uint64 // end of the stack mapping holding sp: its identity
	start   int64
	fn      int32
}

// Counters are the probe's numbers written into the profile's Meta.
type Counters struct {
	Stops, TracedCalls, Breakpoints int64
}

// New starts a session now.
func New(meta model.Meta) *Session {
	now := time.Now()
	p := model.New()
	p.Meta = meta
	p.Meta.StartUnixNs = now.UnixNano()
	return &Session{prof: p, in: model.NewInterner(p), base: now, live: map[*Thread]struct{}{},
		clock: func() int64 { return int64(time.Since(now)) }, readMaps: instrument.ReadMaps}
}

// Base is the zero of the session clock.
func (s *Session) Base() time.Time { return s.base }

// Now is the session's monotonic clock in nanoseconds.
func (s *Session) Now() int64 { return s.clock() }

// SetClock makes now the session's clock from here on: the engine's
// time-stamp counter clock once inline probes time calls with it, so that
// the tracer's own readings (a trap probe's stop, a hold) and the rings'
// are one clock. now must read the same timeline as the clock it
// replaces (nanoseconds since Base).
func (s *Session) SetClock(now func() int64) { s.clock = now }

// Profile is the profile under construction.
func (s *Session) Profile() *model.Profile { return s.prof }

// Interner interns the profile's modules and functions.
func (s *Session) Interner() *model.Interner { return s.in }

// Warn adds a warning to the profile.
func (s *Session) Warn(msg string) {
	if w, ok := s.warned[msg]; ok {
		// Once, with how often: a shell script's every command warned
		// that env had no symbol table. A copy: a snapshot taken before
		// shares the slice.
		w[1]++
		s.warned[msg] = w
		ws := slices.Clone(s.prof.Meta.Warnings)
		ws[w[0]] = fmt.Sprintf("%s (%d times)", msg, w[1])
		s.prof.Meta.Warnings = ws
		return
	}
	if s.warned == nil {
		s.warned = map[string][2]int{}
	}
	s.warned[msg] = [2]int{len(s.prof.Meta.Warnings), 1}
	s.prof.Meta.Warnings = append(s.prof.Meta.Warnings, msg)
}

// TracedCalls is the number of calls counted by Enter.
func (s *Session) TracedCalls() int64 { return s.tracedCalls }

// NewProcess records a process image, forked by parent (nil: none) in
// function forkedBy, or replacing execOf (nil: none) with an exec.
func (s *Session) NewProcess(info ProcessInfo, parent *Thread, forkedBy int, execOf *Process) *Process {
	pr := model.Process{Pid: info.Pid, Parent: model.None, ForkedBy: forkedBy, ExecOf: model.None,
		Exe: info.Exe, Argv: info.Argv, Comm: info.Comm}
	if parent != nil {
		pr.Parent = parent.Proc.Idx
		pr.ParentPid = parent.Proc.Pid
		pr.ForkedByTid = parent.Tid
	} else if info.Parent != nil {
		pr.Parent, pr.ParentPid = info.Parent.Idx, info.Parent.Pid
	}
	if execOf != nil {
		pr.ExecOf = execOf.Idx
		pr.Parent = s.prof.Processes[execOf.Idx].Parent
		pr.ParentPid = s.prof.Processes[execOf.Idx].ParentPid
	}
	s.prof.Processes = append(s.prof.Processes, pr)
	return &Process{Pid: info.Pid, Idx: len(s.prof.Processes) - 1, Exe: info.Exe}
}

// NewThread records a thread of p spawned by parent (nil: none) in
// function spawnedBy, starting its clock now.
func (s *Session) NewThread(tid int, p *Process, parent *Thread, spawnedBy int, name string) *Thread {
	t := &Thread{Tid: tid, Proc: p, rec: model.NewRecorder(s.Now())}
	if s.detailRule != nil {
		t.det = detail.NewThread(s.detailRule)
	}
	mt := model.Thread{Tid: tid, Process: p.Idx, Name: name, SpawnedBy: spawnedBy}
	if parent != nil && parent.Proc == p {
		mt.ParentTid = parent.Tid
		t.Level = parent.Level + 1
	}
	mt.Level = t.Level
	s.prof.Threads = append(s.prof.Threads, mt)
	t.Idx = len(s.prof.Threads) - 1
	s.live[t] = struct{}{}
	p.Alive++
	return t
}

// SetLevel sets the nesting level and parent of a thread found at attach,
// whose creation was not seen.
func (s *Session) SetLevel(t *Thread, level, parentTid int) {
	t.Level = level
	mt := &s.prof.Threads[t.Idx]
	mt.Level, mt.ParentTid = level, parentTid
}

// Done reports whether FinishThread has run for t.
func (t *Thread) Done() bool { return t.done }

// FinishThread closes t's open activations and stores its CCT. A name ""
// keeps the one the thread had.
func (s *Session) FinishThread(t *Thread, name string, now int64) {
	if t.done {
		return
	}
	t.done = true
	nodes, traced := t.rec.Finish(now)
	mt := &s.prof.Threads[t.Idx]
	mt.Nodes, mt.TracedNs = nodes, traced
	if t.det != nil {
		mt.Trees, mt.DroppedTrees = t.det.Finish(now)
		s.detailLost += t.det.Lost()
	}
	if name != "" {
		mt.Name = name
	}
	t.frames = nil
	delete(s.live, t)
	t.Proc.Alive--
}

// ProcessEnded records how p ended: an exit code, or a fatal signal.
func (s *Session) ProcessEnded(p *Process, exited bool, code int, signal string) {
	pr := &s.prof.Processes[p.Idx]
	if exited {
		pr.Exited, pr.ExitCode = true, code
	} else {
		pr.Signal = signal
	}
}

// Spawner is the innermost traced function on t's stack that is not a
// creation call, or None.
func (s *Session) Spawner(t *Thread) int {
	st := t.rec.Stack()
	for i := len(st) - 1; i >= 0; i-- {
		if !model.IsCreationCall(s.prof.Functions[st[i]].Name) {
			return st[i]
		}
	}
	return model.None
}

// Stack lists t's open functions, outermost first.
func (s *Session) Stack(t *Thread) []int { return t.rec.Stack() }

// Depth is the number of t's open frames.
func (s *Session) Depth(t *Thread) int { return len(t.frames) }

// Top is the function of t's innermost open frame and of the one below
// it, model.StartFunc where there is none.
func (s *Session) Top(t *Thread) (top, below int) {
	top, below = model.StartFunc, model.StartFunc
	if n := len(t.frames); n > 0 {
		top = int(t.frames[n-1].fn)
		if n > 1 {
			below = int(t.frames[n-2].fn)
		}
	}
	return top, below
}

// Enter opens an activation of fn whose entry saw stack pointer sp and
// return address ret. Frames below sp were abandoned (longjmp,
// exceptions), and one at sp too (a tail call): they close first.
func (s *Session) Enter(t *Thread, fn int, kind model.CallKind, sp, ret uint64, now int64) {
	s.EnterVia(t, model.None, fn, kind, sp, ret, now)
}

// EnterVia is Enter of a call made by via, a counted function (no frames
// of its own), or by the innermost open frame if via is model.None: fn's
// context goes below via's (model.Recorder.EnterVia).
func (s *Session) EnterVia(t *Thread, via, fn int, kind model.CallKind, sp, ret uint64, now int64) {
	s.pop(t, sp, 0, now, true)
	t.frames = append(t.frames, frame{sp: sp, ret: ret, stack: s.StackEnd(t, sp), start: now, fn: int32(fn)})
	t.rec.EnterVia(via, fn, now, kind)
	if t.det != nil && !s.detailRule.Gated {
		t.det.Enter(fn, now, s.Selected(fn))
	}
	s.tracedCalls++
}

// detailSync has t.det follow t's frames up to frame i (lazy detail): the
// frames it did not follow yet open there, at their entry times.
func (s *Session) detailSync(t *Thread, i int) {
	for k := t.det.Depth(); k <= i && k < len(t.frames); k++ {
		f := &t.frames[k]
		t.det.Enter(int(f.fn), f.start, s.Selected(int(f.fn)))
	}
}

// Args gives the activation of fn that Enter just opened its integer
// argument registers (rdi, rsi, rdx, rcx, r8, r9), for detail recording.
func (s *Session) Args(t *Thread, fn int, args *[6]uint64) {
	if t.det != nil {
		s.detailSync(t, len(t.frames)-1)
		t.det.SetArgsAt(len(t.frames)-1, args, s.arity(fn))
	}
}

// ArgsAt gives the open activation whose entry saw stack pointer sp its
// argument registers: inline probes under --slow or --detail-if send a
// call's only when it meets the rule, before the event that closes it.
func (s *Session) ArgsAt(t *Thread, sp uint64, args *[6]uint64) {
	if t.det == nil {
		return
	}
	for i := len(t.frames) - 1; i >= 0; i-- {
		if t.frames[i].sp == sp {
			s.detailSync(t, i)
			t.det.SetArgsAt(i, args, s.arity(int(t.frames[i].fn)))
			return
		}
	}
}

// arity is how many argument registers fn's parameters take, -1 if
// unknown.
func (s *Session) arity(fn int) int {
	if s.nargs.ask == nil {
		return -1
	}
	return s.nargs.get(fn)
}

// SetArity tells how many of a function's argument registers its
// parameters take (-1: unknown), for detail recording.
func (s *Session) SetArity(f func(fn int) int) { s.nargs.ask = f }

// EnterInFlight opens an activation already running when tracing began:
// timed from now, no call counted.
func (s *Session) EnterInFlight(t *Thread, fn int, sp, ret uint64, now int64) {
	t.rec.EnterInFlight(fn, now)
	if t.det != nil {
		// Followed from the start, lazy or not: kept without arguments
		// if it lasts --slow.
		s.detailSync(t, len(t.frames)-1)
		t.det.EnterInFlight(fn, now, s.Selected(fn))
	}
	t.frames = append(t.frames, frame{sp: sp, ret: ret, stack: s.StackEnd(t, sp), start: now, fn: int32(fn)})
}

// Return closes every open frame whose entry stack pointer lies below sp:
// returns, and frames abandoned by longjmp or exceptions, close here; rax
// is the value the outermost one returned. It returns the return address
// of the outermost frame closed, 0 if none.
func (s *Session) Return(t *Thread, sp, rax uint64, now int64) uint64 {
	return s.pop(t, sp, rax, now, false)
}

// RetAt is the return address the innermost open frame of t whose entry
// saw stack pointer sp was entered with (ok false if none is open there):
// a tail call's callee, entered on the same slot, was called from there.
func (s *Session) RetAt(t *Thread, sp uint64) (ret uint64, ok bool) {
	for i := len(t.frames) - 1; i >= 0; i-- {
		if t.frames[i].sp == sp {
			return t.frames[i].ret, true
		}
	}
	return 0, false
}

// Awaits tells whether an open frame of t is to return to ret.
func (s *Session) Awaits(t *Thread, ret uint64) bool {
	for _, f := range t.frames {
		if f.ret == ret {
			return true
		}
	}
	return false
}

// pop closes the frames sp has passed; at an entry, a frame at exactly sp
// was abandoned too (tail call). Frames on another stack (a signal
// handler's sigaltstack) are compared only when a frame below them on this
// stack closes: then they were abandoned too (siglongjmp out of the
// handler).
func (s *Session) pop(t *Thread, sp, rax uint64, now int64, atEntry bool) uint64 {
	if len(t.frames) == 0 {
		return 0
	}
	stack := s.StackEnd(t, sp)
	cut := len(t.frames)
	for i := len(t.frames) - 1; i >= 0; i-- {
		f := t.frames[i]
		if f.stack != stack {
			continue
		}
		if f.sp > sp || (f.sp == sp && !atEntry) {
			break
		}
		cut = i
	}
	var last uint64
	for len(t.frames) > cut {
		last = t.frames[len(t.frames)-1].ret
		t.frames = t.frames[:len(t.frames)-1]
		if s.isCheckpoint.get(t.rec.Top()) {
			s.checkpoints++
		}
		t.rec.Exit(now)
		if t.det != nil && t.det.Depth() > len(t.frames) {
			// Only the outermost frame closed by a return returned (rax);
			// the others were left.
			t.det.Exit(now, rax, !atEntry && len(t.frames) == cut)
		}
	}
	return last
}

// SetDetail records in detail the calls of the functions whose name (or
// module:name) matches re that meet rule (docs/detail.md). Set
// before the first thread.
func (s *Session) SetDetail(re *regexp.Regexp, rule *detail.Rule) {
	s.selected.ask = func(fn int) bool { return s.named(fn, re.MatchString) }
	s.detailRule = rule
	r := &model.DetailRule{Funcs: re.String(), SlowNs: rule.SlowNs, Limit: rule.Limit}
	if rule.If != nil {
		r.If = rule.If.Text
	}
	s.prof.Meta.Detail = r
}

// Selected tells whether fn's calls are recorded in detail.
func (s *Session) Selected(fn int) bool { return s.selected.get(fn) }

// named tells whether fn's name or module:name is one match accepts.
func (s *Session) named(fn int, match func(string) bool) bool {
	return match(s.prof.Functions[fn].Name) || match(s.prof.FuncName(fn))
}

// SetCheckpoint names the function whose returns Checkpoints counts: a
// symbol ("handle_request") or module:symbol ("libc.so.6:write").
func (s *Session) SetCheckpoint(name string) {
	s.isCheckpoint.ask = func(fn int) bool { return s.named(fn, func(n string) bool { return n == name }) }
}

// Checkpoints counts the returns (and abandoned activations) of the
// checkpoint function so far.
func (s *Session) Checkpoints() int64 { return s.checkpoints }

// SetStack tells t's current stack, [lo, hi): the tracer read it as it
// gave the thread its ring (a main thread's with the room it may grow
// into), and StackEnd need not read it again.
func (s *Session) SetStack(t *Thread, lo, hi uint64) {
	t.stackLo, t.stackHi = lo, hi
}

// ImageGone tells that t's memory is gone (an exec replaced it, or the
// thread exited): StackEnd no longer reads the process's maps for it,
// which describe another image now, or none (a read for each event
// drained after an exec was most of a shell script's drain).
func (s *Session) ImageGone(t *Thread) { t.imageGone = true }

// StackEnd identifies the stack sp is on by the end of its mapping (a
// stack grows down, so its end stays put), 0 if unknown. The thread caches
// its current stack; /proc is read only when sp leaves it.
func (s *Session) StackEnd(t *Thread, sp uint64) uint64 {
	if sp >= t.stackLo && sp < t.stackHi {
		return t.stackHi
	}
	if t.imageGone {
		return 0
	}
	maps, err := s.readMaps(t.Proc.Pid)
	if err == nil {
		for _, m := range maps {
			if sp >= m.Start && sp < m.End {
				t.stackLo, t.stackHi = m.Start, m.End
				return m.End
			}
		}
	}
	return 0
}

// Held takes the time from..to, during which the probe held t stopped to
// set itself up, out of t's open activations (model.Recorder.Hold).
func (s *Session) Held(t *Thread, from, to int64) {
	if !t.done {
		s.heldNs += t.rec.Hold(from, to)
	}
}

// HeldNs is the time Held took out, summed over threads.
func (s *Session) HeldNs() int64 { return s.heldNs }

// Stopped takes the time from..to, during which a trap probe's stop held
// t (one side of the event the stop recorded), out of t's open
// activations, as Held does; it is counted apart, as the trap probes'
// cost.
func (s *Session) Stopped(t *Thread, from, to int64) {
	if !t.done {
		// Estimated, so never reaching back past the thread's last event:
		// that time is the frame's, or held already.
		s.stopNs += t.rec.Hold(max(from, t.rec.Last()), to)
	}
}

// StopsTaken counts a stop whose time Stopped took out.
func (s *Session) StopsTaken() { s.stops++ }

// StopNs is the time Stopped took out and the stops it came from.
func (s *Session) StopNs() (ns, stops int64) { return s.stopNs, s.stops }

// Forked gives child fresh accounting (docs/design.md, Recursion): the
// forking thread's open frames, timed from now, no calls counted.
func (s *Session) Forked(parent, child *Thread, now int64) {
	for _, fn := range parent.rec.Stack() {
		child.rec.EnterInFlight(fn, now)
		if child.det != nil {
			child.det.EnterInFlight(fn, now, s.Selected(fn))
		}
	}
	child.frames = append([]frame(nil), parent.frames...)
}

// Crash records a fatal signal about to end t's process: pcName (where
// it stopped; "" if unknown), then t's open functions, innermost first.
func (s *Session) Crash(t *Thread, signal string, addr uint64, pcName string) {
	c := &model.Crash{Pid: t.Proc.Pid, Tid: t.Tid, Signal: signal, Addr: addr}
	if pcName != "" {
		c.Stack = append(c.Stack, pcName)
	}
	st := t.rec.Stack()
	for i := len(st) - 1; i >= 0; i-- {
		c.Stack = append(c.Stack, s.prof.FuncName(st[i]))
	}
	s.prof.Meta.Crash = c
	s.prof.Meta.Partial = true
	s.prof.Meta.PartialReason = "target crashed: " + c.Signal
}

// Snapshot is the profile as if every thread ended now, the session going
// on. The caller may keep it and read it while the session goes on: it
// shares only what the session no longer changes.
func (s *Session) Snapshot(now int64, counters Counters) *model.Profile {
	p := *s.prof
	// Appends of the session must never write into what the snapshot sees.
	// Functions is copied, not clipped: the engine sets TracedSinceNs on
	// existing entries later (--auto-expand).
	p.Modules, p.Functions = slices.Clip(p.Modules), slices.Clone(p.Functions)
	p.Meta.Warnings = slices.Clip(p.Meta.Warnings)
	p.Threads = append([]model.Thread(nil), s.prof.Threads...)
	p.Processes = append([]model.Process(nil), s.prof.Processes...)
	for t := range s.live {
		p.Threads[t.Idx].Nodes, p.Threads[t.Idx].TracedNs = t.rec.Snapshot(now)
		if t.det != nil {
			p.Threads[t.Idx].Trees, p.Threads[t.Idx].DroppedTrees = t.det.Trees(now)
		}
	}
	emptyCCTs(&p)
	p.Meta.DurationNs = now
	s.describe(&p.Meta)
	s.counters(&p.Meta, counters)
	return &p
}

// Finish closes every thread not finished and completes the profile.
func (s *Session) Finish(now int64, counters Counters) *model.Profile {
	for t := range s.live {
		s.FinishThread(t, "", now)
	}
	if s.detailLost > 0 {
		s.Warn(fmt.Sprintf("--detail: %d calls that met the rule were not kept: a thread held a million kept calls inside one selected call", s.detailLost))
	}
	// Threads that never got a CCT (gone before any stop) keep an empty one.
	emptyCCTs(s.prof)
	s.prof.Meta.DurationNs = now
	s.describe(&s.prof.Meta)
	s.counters(&s.prof.Meta, counters)
	return s.prof
}

// describe names the run in m after its first process, unless named.
func (s *Session) describe(m *model.Meta) {
	if len(s.prof.Processes) > 0 {
		if m.Exe == "" {
			m.Exe, m.Comm = s.prof.Processes[0].Exe, s.prof.Processes[0].Comm
		}
		if len(m.Command) == 0 {
			m.Command = s.prof.Processes[0].Argv
		}
	}
}

func emptyCCTs(p *model.Profile) {
	for i := range p.Threads {
		if len(p.Threads[i].Nodes) == 0 {
			p.Threads[i].Nodes = []model.Node{{Func: model.StartFunc, Parent: model.None}}
		}
	}
}

// counters writes c into m; a TracedCalls of 0 means the session's own
// count.
func (s *Session) counters(m *model.Meta, c Counters) {
	if c.TracedCalls == 0 {
		c.TracedCalls = s.tracedCalls
	}
	m.Stops, m.TracedCalls, m.Breakpoints = c.Stops, c.TracedCalls, c.Breakpoints
}

// SetArcs records t's counted calls as they stand (the counting probes'
// tables only grow): they replace what t had.
func (s *Session) SetArcs(t *Thread, arcs []model.Arc) {
	s.prof.Threads[t.Idx].Arcs = arcs
}

// Sample gives ns of t's sampled CPU time to its context now: fn is the
// traced function the sample's instruction lies in (model.None: none).
func (s *Session) Sample(t *Thread, fn int, ns int64) {
	t.rec.Sample(fn, ns)
}
