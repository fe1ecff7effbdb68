package attach

import (
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/profile-dev/profile/attach/internal/procfs"
	"github.com/profile-dev/profile/attach/internal/ptrace"
	"github.com/profile-dev/profile/instrument"
	"github.com/profile-dev/profile/instrument/unwind"
	"github.com/profile-dev/profile/session"
)

// engine is one tracing session: the trap probe. It is owned by the
// tracer thread; only stopRequested, expandDue and wakers are touched
// from elsewhere.
// The call tree is the session's: the engine only feeds it events.
type engine struct {
	opt    Options
	s      *session.Session
	start  time.Time
	probes []probeKind // told of threads, forks and detach, in order
	stats  Stats
	fatal  error // the session failed after the target started

	// Each subsystem's own state, beside its code.
	tracees   // the stop loop: threads, processes, stops (state.go)
	scanning  // modules and what killed profilers left (instrument.go)
	inlining  // inline probes' rings and their drain (inline.go)
	stopCosts // what probes cost the threads (compensate.go)
	live      // progress reports and checkpoint snapshots (live.go)
	detailing // detail calls' argument registers (state.go)
	gating    // the calling context (context.go)
	expanding // auto-expand (expand.go)
	demoting  // trap probes found hot (demote.go)
	counting  // counting probes and their tables (counted.go)
	sampling  // the threads' CPU time sampled (sampling.go)
	adapting  // short functions moved to counting (adapt.go)
	guarding  // the watcher that mends the targets if we die (guard.go)
}

// tracees is the stop loop's state: the threads it holds and how it is
// going.
type tracees struct {
	threads  map[int]*thread
	early    map[int]unix.WaitStatus
	deferred []deferredStop

	rootPid  int
	rootExit *unix.WaitStatus
	// roots are the processes attach took (AttachAll): the session
	// reports the root's exit as the target's only when it is alone.
	// attachParent is the traced parent of each that has one.
	roots        []int
	attachParent map[int]*session.Process
	launched     bool // we started the root process (record)

	stopRequested atomic.Bool
	wakers        sync.Map // pids of our wake-up children (wake)
	detaching     bool
	pausing       bool          // pauseAll gathers every thread in a stop
	spinMax       time.Duration // the longest a wait for a stop polls (ptrace.SpinMax)
	waited        time.Duration // how long the last wait for a stop took
}

// detailing: detailProbed counts the probed functions recorded in
// detail; arity holds their parameter registers when known, params each
// module's (instrument.ParamRegs) by path.
type detailing struct {
	detailProbed int
	arity        map[int]int
	params       map[string]map[string]int
}

type deferredStop struct {
	tid int
	ws  unix.WaitStatus
}

// process is one traced process image.
type process struct {
	pid      int
	sp       *session.Process
	as       *space
	exe      string
	noFollow bool             // a vfork child under --no-follow-fork: let go at exec
	stripped bool             // its executable has no symbols: only libraries are traced
	unwind   []*unwind.Module // call-frame information of its modules, once loaded
}

// thread is one traced thread: its ptrace state; st is its accounting.
type thread struct {
	tid  int
	proc *process
	st   *session.Thread

	lastNs int64 // time of its last ring event: ring order wins over a clock read a little late
	// sched reads its scheduler counters at each trap stop, resumedAt
	// when it was last let go: what its trap stops cost it (hit).
	sched     procfs.SchedStat
	resumedAt int64
	// vforkOf is the parent a vfork child borrows its memory from until
	// it execs or exits; the parent cannot stop meanwhile, so detach lets
	// the child run there rather than stop it.
	vforkOf *thread

	smp *threadSamples // its CPU samples (sampling.go), nil if not sampled
	// spilled: its counted calls its count table had no room for, each
	// a ring event (stub.CountedID), by call site.
	spilled map[fastKey]int64

	stopState   // where the loop has it
	signalState // its signals while code of ours runs in it
	threadCtx   // the calling context (context.go)
}

// stopState is where the loop has a thread.
type stopState struct {
	stopped   bool // in a ptrace-stop we know of (detach, pause)
	asked     bool // pause interrupted it and the stop has not come yet
	stopOwed  bool // an injected call ran past our interrupt's stop (deferStop)
	listening bool // in a group-stop, resumed with PTRACE_LISTEN
	// unreaped: its SIGTRAP stop was peeked, not reaped, so the signal
	// stays pending until the thread is resumed (which discards the stop's
	// notification): should the tracer die first, the SIGTRAP is delivered
	// to the heal handler. trapAt is the breakpoint it sits on, until the
	// tracer moves it on.
	unreaped bool
	trapAt   uint64
}

// signalState is a thread's signals as the engine keeps them.
type signalState struct {
	// mask is the thread's signal mask at its last look (keepHandler).
	mask uint64
	// sigs are signals the thread took from the kernel while code of ours
	// ran in it (an injected call): the tracer continues it past their
	// delivery stop without them, so they are raised again once that code
	// is done (reraise). raised keeps their siginfo, put back at their
	// delivery stop.
	sigs, raised []ptrace.SigInfo
	// pendingSig is a signal that arrived while we stepped the thread (out
	// of the inline probes' code at detach, past a function's first bytes
	// at a patch): delivered as it is let go or resumed.
	pendingSig int
}

// threadCtx: the context components a thread opened at trap stops; ctxN
// is its count of open components in a space without inline probes.
type threadCtx struct {
	ctx  []ctxFrame
	ctxN int
}

func newEngine(opt Options) *engine {
	s := session.New(opt.Meta)
	if opt.Live.Checkpoint != "" {
		s.SetCheckpoint(opt.Live.Checkpoint)
	}
	e := &engine{opt: opt, s: s, start: s.Base()}
	e.threads, e.early = map[int]*thread{}, map[int]unix.WaitStatus{}
	e.libsSeen, e.expanded = map[string]bool{}, map[int]bool{}
	e.probes = newProbeKinds(e)
	if opt.Context != nil {
		e.stats.Context.Spec = opt.Context.String()
	}
	if opt.Detail.Funcs != nil {
		e.opt.Detail.Rule.Gated = argsGated(opt)
		s.SetDetail(opt.Detail.Funcs, &e.opt.Detail.Rule)
		s.SetArity(e.arityOf)
	}
	return e
}

// noteArity finds how many argument registers the parameters of fn (sym
// in mod) take, from mod's debug information, for its detail calls.
func (e *engine) noteArity(fn int, mod *instrument.Module, sym instrument.Symbol) {
	if e.arity == nil {
		e.arity, e.params = map[int]int{}, map[string]map[string]int{}
	}
	regs, ok := e.params[mod.Path]
	if !ok {
		var err error
		if regs, err = instrument.ParamRegs(mod.Path); err != nil {
			e.warn("%s: debug information unreadable (%v): detail calls show all six argument registers", mod.Path, err)
		}
		e.params[mod.Path] = regs
	}
	if n, ok := regs[sym.Raw]; ok {
		e.arity[fn] = n
	}
}

// arityOf is how many argument registers fn's parameters take, -1 if
// unknown.
func (e *engine) arityOf(fn int) int {
	if n, ok := e.arity[fn]; ok {
		return n
	}
	return -1
}

// now is the session's monotonic clock in nanoseconds.
func (e *engine) now() int64 { return e.s.Now() }

// deferStop keeps a stop that came while the tracer ran code in thread
// tid (an injected call), for the loop to handle once it is done. Our
// interrupt's stop is not kept: the thread is continued past it, so the
// loop would take it for stopped while it runs (detach and pause gather
// threads in that stop). rearm asks for it again.
//
// A PTRACE_EVENT_STOP is our interrupt's, whatever its signal: in a
// stopped process every such trap reports the group-stop's signal
// (do_jobctl_trap), and kept for the loop, it made the loop take the
// thread, running again by then, for one in a group-stop: PTRACE_LISTEN
// failed and it was resumed, running while its process was stopped. A
// signal's delivery stop is not kept either: the thread is continued past
// it without the signal, which discards it, and the loop's resume with the
// signal later found the thread running (ESRCH): the signal was lost. It
// is taken (holdSignal) and raised again when our code is done (rearm).
func (e *engine) deferStop(tid int, ws unix.WaitStatus) {
	t := e.threads[tid]
	if t != nil && ws.Stopped() && ptrace.Event(ws) == unix.PTRACE_EVENT_STOP {
		t.stopOwed = true
		return
	}
	if t != nil && ws.Stopped() && ptrace.Event(ws) == 0 && ws.StopSignal()&0x80 == 0 {
		e.holdSignal(t, ws.StopSignal())
		return
	}
	e.deferred = append(e.deferred, deferredStop{tid, ws})
}

// rearm interrupts thread tid again if deferStop let its interrupt's stop
// go by: it stops as soon as it is resumed. The signals it took meanwhile
// are raised again.
func (e *engine) rearm(tid int) {
	t := e.threads[tid]
	if t == nil {
		return
	}
	e.reraise(t)
	if t.stopOwed {
		t.stopOwed = false
		ptrace.Interrupt(tid)
	}
}

// holdSignal keeps the signal of the delivery stop thread t sits in, with
// its siginfo, to raise it again (reraise).
func (e *engine) holdSignal(t *thread, sig syscall.Signal) {
	si, err := ptrace.GetSigInfo(t.tid)
	if err != nil || si.Signo != int32(sig) {
		si = ptrace.SigInfo{Signo: int32(sig)}
	}
	t.sigs = append(t.sigs, si)
}

// reraise makes the signals thread t took while our code ran pending
// again, for the thread alone (the kernel had chosen it): they are
// delivered, their siginfo put back (restoreSigInfo), when it goes on.
// Pending, they survive the tracer's death too.
func (e *engine) reraise(t *thread) {
	for _, si := range t.sigs {
		if unix.Tgkill(t.proc.pid, t.tid, syscall.Signal(si.Signo)) == nil {
			t.raised = append(t.raised, si)
		}
	}
	t.sigs = nil
}

// siTkill is si_code of a signal sent by tgkill.
const siTkill = -6

// restoreSigInfo gives a signal reraise sent the siginfo it first came
// with: the program sees the sender it had.
func (e *engine) restoreSigInfo(t *thread, sig syscall.Signal) {
	for i, si := range t.raised {
		if si.Signo != int32(sig) {
			continue
		}
		t.raised = append(t.raised[:i], t.raised[i+1:]...)
		if cur, err := ptrace.GetSigInfo(t.tid); err == nil && cur.Code == siTkill && cur.Pid() == int32(os.Getpid()) {
			ptrace.SetSigInfo(t.tid, &si)
		}
		return
	}
}

// newProcess records a process image, forked by parent or replacing
// execOf (nil: none).
func (e *engine) newProcess(pid int, as *space, parent *thread, forkedBy int, execOf *process) *process {
	var pt *session.Thread
	if parent != nil {
		pt = parent.st
	}
	var old *session.Process
	if execOf != nil {
		old = execOf.sp
	}
	info := session.ProcessInfo{Pid: pid, Exe: procfs.Exe(pid), Argv: procfs.Argv(pid), Comm: procfs.Comm(pid), Parent: e.attachParent[pid]}
	p := &process{pid: pid, sp: e.s.NewProcess(info, pt, forkedBy, old), as: as, exe: info.Exe}
	e.stats.Processes++
	return p
}

// newThread records a thread, starting its clock now.
func (e *engine) newThread(tid int, p *process, parent *thread, spawnedBy int) *thread {
	var pt *session.Thread
	if parent != nil {
		pt = parent.st
	}
	t := &thread{tid: tid, proc: p, st: e.s.NewThread(tid, p.sp, pt, spawnedBy, procfs.Comm(tid))}
	t.mask, _ = ptrace.SigMask(tid)
	e.threads[tid] = t
	e.stats.AllThreads++
	return t
}

// finishThread closes a thread's open activations and stores its CCT.
func (e *engine) finishThread(t *thread) {
	if t.st.Done() {
		return
	}
	e.s.FinishThread(t.st, procfs.Comm(t.tid), e.s.Now())
}

// soleTask tells whether stopped thread t is the only task in its memory:
// no other thread we trace shares its space, and its process has no other.
func (e *engine) soleTask(t *thread) bool {
	for _, o := range e.threads {
		if o != t && o.proc.as == t.proc.as {
			return false
		}
	}
	tasks, err := procfs.Tasks(t.proc.pid)
	return err == nil && len(tasks) == 1
}

// stillSpace tells whether nothing runs in space as while every thread
// we trace is stopped: each process using it has no task but ours, and
// no thread another tracer holds is parked in it (a parked thread runs
// our park handler meanwhile).
func (e *engine) stillSpace(as *space) bool {
	if as.holding() {
		return false
	}
	ours := map[int]int{} // pid: its threads, all stopped
	for _, t := range e.threads {
		if t.proc.as != as {
			continue
		}
		if !t.stopped {
			return false
		}
		ours[t.proc.pid]++
	}
	for pid, n := range ours {
		if tasks, err := procfs.Tasks(pid); err != nil || len(tasks) != n {
			return false
		}
	}
	return len(ours) > 0
}

// forget drops a thread that is gone.
func (e *engine) forget(t *thread) {
	e.s.ImageGone(t.st)
	e.threadGone(t)
	e.finishThread(t)
	t.sched.Close()
	delete(e.threads, t.tid)
	if as := t.proc.as; !e.spaceInUse(as) {
		// The image is gone (exit, exec).
		for _, k := range e.probes {
			k.released(as)
		}
		as.closeText()
		e.unwatchHeal(as)
	}
}

// counters are the probe's numbers for the profile.
func (e *engine) counters() session.Counters {
	return session.Counters{Stops: e.stats.Stops, TracedCalls: e.s.TracedCalls(), Breakpoints: e.stats.Breakpoints}
}
