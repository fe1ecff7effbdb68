package attach

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/profile-dev/profile/attach/internal/procfs"
	"github.com/profile-dev/profile/attach/internal/ptrace"
)

var debug = os.Getenv("PROFILE_DEBUG") != ""

// loop handles stops until no tracee is left or a stop is requested.
func (e *engine) loop() (*Result, error) {
	for len(e.threads) > 0 {
		if e.stopRequested.Load() && !e.detaching {
			e.detachAll()
			break
		}
		if e.expandDue.Swap(false) {
			e.autoExpand()
		}
		if e.adaptDue.Swap(false) {
			e.adapt()
		}
		tid, ws, err := e.nextStop()
		if errors.Is(err, unix.ECHILD) {
			if len(e.threads) > 0 {
				e.warn("lost %d threads: the kernel reports no tracee left", len(e.threads))
			}
			break
		}
		if err != nil {
			return nil, fmt.Errorf("wait: %w", err)
		}
		if e.waker(tid) {
			continue // our wake-up child: look at the requests
		}
		e.handleStop(tid, ws)
		e.report()
	}
	if e.fatal != nil {
		return nil, e.fatal
	}
	return e.finish(), nil
}

// nextStop returns a stop kept for later, else waits for the next one.
// A wait for a stop polls (ptrace.Peek) for twice as long as the last
// one took, if that was within spinMax: stops that come close together (a hot
// trap probe's calls) keep being picked up without the tracer's CPU going
// idle, while a stop seconds after the last (inline probes: a thread's
// first stop, a live patch) is waited for asleep. Polling a fixed 2,000
// times each wait took 50,000 system calls in 4 s beside redis under
// load, at a dozen stops.
func (e *engine) nextStop() (int, unix.WaitStatus, error) {
	if len(e.deferred) > 0 {
		d := e.deferred[0]
		e.deferred = e.deferred[1:]
		e.stopAt = e.now()
		return d.tid, d.ws, nil
	}
	// Reaping a stop clears its pending signal. A SIGTRAP stop of a thread
	// of ours is left unreaped (peeked) until handle resumes it, so that
	// the heal handler gets it should the tracer die meanwhile; every
	// other stop is reaped now.
	var tid int
	var ws unix.WaitStatus
	var err error
	for {
		spin := time.Duration(0)
		if e.waited <= e.spinMax {
			spin = min(2*e.waited, e.spinMax)
		}
		e.mu.Unlock() // the drain goroutine runs while we wait
		from := e.now()
		tid, ws, err = ptrace.Peek(spin)
		e.stopAt = e.now() // before waiting for the drain: the thread waits too
		e.waited = time.Duration(e.stopAt - from)
		e.mu.Lock()
		if err != nil {
			break
		}
		if t := e.threads[tid]; t != nil && ws.Stopped() && ws.StopSignal() == unix.SIGTRAP && ptrace.Event(ws) == 0 {
			t.unreaped = true
			break
		}
		if ws, err = ptrace.Reap(tid); err == nil {
			break
		}
		// Gone meanwhile (reaped as a task of an exec, say): the next one.
	}
	if err == nil {
		e.stats.Stops++
		if debug {
			fmt.Fprintf(os.Stderr, "stop tid=%d status=%#x\n", tid, uint32(ws))
		}
	}
	return tid, ws, err
}

// handleStop handles a stop and reaps it if handle left it unreaped and
// the thread stopped: a peeked stop must not be reported again.
func (e *engine) handleStop(tid int, ws unix.WaitStatus) {
	e.handle(tid, ws)
	if t := e.threads[tid]; t != nil && t.unreaped {
		t.unreaped = false
		// A SIGKILL can wake the thread from the peeked stop while it is
		// handled: it then sits in its exit stop, and the reap takes that
		// stop's notification. Handle what was reaped, or the thread
		// waits there forever.
		if ws2, err := ptrace.Reap(tid); err == nil && ws2 != ws {
			e.handleStop(tid, ws2)
		}
	}
}

// handle dispatches one wait status.
func (e *engine) handle(tid int, ws unix.WaitStatus) {
	t := e.threads[tid]
	if t == nil {
		switch {
		case ws.Stopped() && ptrace.Event(ws) == unix.PTRACE_EVENT_EXIT:
			// A new task killed before its creator's event was seen: a
			// SIGKILL wakes the creator from that event's stop, and the
			// event is lost. Nothing will claim the task: let it exit,
			// or its process stays a zombie forever.
			delete(e.early, tid)
			ptrace.Cont(tid, 0)
		case ws.Stopped():
			// A new task whose creator's event has not arrived yet.
			e.early[tid] = ws
		}
		return
	}
	for _, k := range e.probes {
		k.stopped(t, ws)
	}
	switch {
	case ws.Exited() || ws.Signaled():
		e.taskGone(t, ws)
	case !ws.Stopped():
		return
	case ws.StopSignal() == unix.SIGTRAP && ptrace.Event(ws) > 0:
		e.event(t, ptrace.Event(ws))
	case ws.StopSignal() == unix.SIGTRAP:
		e.sigtrap(t)
	default:
		if ptrace.Event(ws) == unix.PTRACE_EVENT_STOP {
			e.groupStop(t)
			return
		}
		if len(t.raised) > 0 {
			e.restoreSigInfo(t, ws.StopSignal())
		}
		e.signal(t, ws.StopSignal())
	}
}

// event handles a ptrace event stop.
func (e *engine) event(t *thread, ev int) {
	switch ev {
	case unix.PTRACE_EVENT_CLONE, unix.PTRACE_EVENT_FORK, unix.PTRACE_EVENT_VFORK:
		msg, err := ptrace.EventMsg(t.tid)
		if err == nil {
			e.spawned(t, int(msg), ev)
		}
	case unix.PTRACE_EVENT_EXEC:
		if !e.execed(t) {
			return
		}
	case unix.PTRACE_EVENT_VFORK_DONE:
		e.vforkDone(t)
		if e.detaching {
			// Its vfork child has exec'd or exited: the parent can stop
			// now, once out of the vfork call (this stop is inside it,
			// where code injected to clean up would run as its return).
			e.resume(t, 0)
			e.stopForDetach(t)
			return
		}
	case unix.PTRACE_EVENT_EXIT:
		e.threadGone(t)
		e.finishThread(t)
	case unix.PTRACE_EVENT_STOP:
		// Our interrupt, a new task's first stop, or the re-trap of a
		// listening task on SIGCONT.
		t.listening = false
		t.asked = false
		if e.detaching || e.pausing {
			if procfs.TrapPending(t.tid) {
				// It hit a breakpoint as we interrupted it: the trap
				// comes after this stop. Let it arrive and be handled
				// (hit re-interrupts), or it would kill the target once
				// we are gone.
				e.resume(t, 0)
				return
			}
			t.stopped = true
			return
		}
	}
	e.resume(t, 0)
}

// groupStop handles a job-control stop: keep the task stopped without
// holding it in ptrace so SIGCONT works as without the profiler.
func (e *engine) groupStop(t *thread) {
	if e.detaching {
		t.stopped = true
		return
	}
	if e.pausing {
		t.stopped, t.listening, t.asked = true, true, false // listens again at resumeAll
		return
	}
	t.listening = true
	if err := ptrace.Listen(t.tid); err != nil {
		e.resume(t, 0)
	}
}

// signal passes a signal that is not ours to the target unchanged.
func (e *engine) signal(t *thread, sig syscall.Signal) {
	if debug && sig == unix.SIGILL {
		e.debugLost(t) // a return stub with no shadow entry?
	}
	if !e.detaching && crashSignal(t, sig) {
		e.crash(t, sig)
	}
	e.resume(t, int(sig))
}

func (e *engine) resume(t *thread, sig int) {
	if sig == 0 && t.pendingSig != 0 {
		// A signal that came while we stepped it (stepPast), in its
		// signal-delivery stop still.
		sig, t.pendingSig = t.pendingSig, 0
	}
	// Read before: the thread woken may take the tracer's CPU at once.
	t.resumedAt = e.now()
	err := ptrace.Cont(t.tid, sig)
	t.unreaped = false // resuming discards a peeked stop's notification
	if err != nil && !errors.Is(err, unix.ESRCH) {
		fmt.Fprintf(os.Stderr, "profile: resume %d: %v\n", t.tid, err)
	}
}

// sigtrap handles a SIGTRAP stop: our breakpoint, a breakpoint already
// removed (rewind and swallow), or the program's own SIGTRAP (deliver).
func (e *engine) sigtrap(t *thread) {
	var regs unix.PtraceRegs
	if err := ptrace.GetRegs(t.tid, &regs); err != nil {
		return
	}
	as := t.proc.as
	addr := regs.Rip - 1
	if b, ok := as.bps[addr]; ok {
		t.trapAt = addr
		e.keepHandler(t)
		e.hit(t, b, &regs)
		return
	}
	si, err := ptrace.GetSigInfo(t.tid)
	if err == nil && si.Code == ptrace.SIKernel && as.removed[addr] {
		e.keepHandler(t)
		regs.Rip = addr
		e.moveTo(t, &regs)
		e.resume(t, 0)
		return
	}
	e.resume(t, int(unix.SIGTRAP))
}

// taskGone handles a task's end.
func (e *engine) taskGone(t *thread, ws unix.WaitStatus) {
	p := t.proc
	e.forget(t)
	if t.tid != p.pid {
		return
	}
	if ws.Exited() {
		e.s.ProcessEnded(p.sp, true, ws.ExitStatus(), "")
	} else {
		e.s.ProcessEnded(p.sp, false, 0, signalName(ws.Signal()))
	}
	if p.pid == e.rootPid && len(e.roots) <= 1 {
		w := ws
		e.rootExit = &w
	}
}

// finish assembles the profile.
func (e *engine) finish() *Result {
	for _, k := range e.probes {
		k.finish()
	}
	for _, t := range e.threads {
		e.finishThread(t)
	}
	for _, l := range e.opt.Filter.Libs() {
		if !e.libsSeen[l] {
			msg := fmt.Sprintf("--lib %s matched no library the program loaded", l)
			e.warn("%s", msg)
			e.s.Warn(msg)
		}
	}
	if e.opt.Live.Checkpoint != "" && e.s.Checkpoints() == 0 {
		e.warn("--checkpoint %s: no traced function of that name returned: no snapshot was taken", e.opt.Live.Checkpoint)
	}
	if e.opt.Detail.Funcs != nil && e.detailProbed == 0 {
		msg := fmt.Sprintf("--detail %s matched no traced function: no call was recorded in detail", e.opt.Detail.Funcs)
		e.warn("%s", msg)
		e.s.Warn(msg)
	}
	for _, is := range e.inl {
		e.lastArcs(is)
	}
	e.s.Profile().Meta.CPUSamples = e.sampledMeta()
	e.stats.CPUSamples = e.s.Profile().Meta.CPUSamples
	if h := e.untracedHint(); h != "" {
		e.warn("%s", h)
		e.s.Warn(h)
	}
	prof := e.s.Finish(e.now(), e.counters())
	e.stats.TooFewSamples = measuredIfFew(prof)
	e.stats.TracedCalls = e.s.TracedCalls()
	r := &Result{Profile: prof, Stats: e.stats, Pid: e.rootPid}
	r.Stats.Elapsed = e.elapsed()
	if ws := e.rootExit; ws != nil {
		r.Exited = true
		if ws.Exited() {
			r.ExitCode = ws.ExitStatus()
		} else {
			r.Signal, r.CoreDumped = ws.Signal(), ws.CoreDump()
		}
		if !ws.Exited() && !prof.Meta.Partial {
			prof.Meta.Partial = true
			prof.Meta.PartialReason = "target killed by " + signalName(ws.Signal())
		}
	} else if e.detaching {
		prof.Meta.Detached = true // complete for its window: not partial
	}
	return r
}

func signalName(s syscall.Signal) string {
	if n := unix.SignalName(s); n != "" {
		return n
	}
	return fmt.Sprintf("signal %d", int(s))
}
