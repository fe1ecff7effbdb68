package attach

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/profile-dev/profile/attach/internal/procfs"
	"github.com/profile-dev/profile/attach/internal/ptrace"
	"github.com/profile-dev/profile/model"
)

// launch starts argv traced from its first instruction. The child is
// started with PTRACE_TRACEME (the only way to catch its first
// instruction), then handed over to PTRACE_SEIZE so that every task is
// seized: group-stops and PTRACE_LISTEN then work as for attach.
func (e *engine) launch(argv []string) error {
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return fmt.Errorf("%s: %w", argv[0], err)
	}
	if err := e.checkProgram(path); err != nil {
		return err
	}
	cmd := exec.Command(path, argv[1:]...)
	cmd.Args = argv
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if e.opt.stdout != nil {
		cmd.Stdout = e.opt.stdout
	}
	if e.opt.quiet {
		cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, nil, nil
	}
	cmd.Dir = e.opt.dir
	ptrace.StartTraced(cmd)
	// Handed over below, the child sits stopped by our SIGSTOP until it
	// is seized and continued: should profile die in between, the
	// parent-death signal continues it. It is cleared before the child
	// runs a single instruction (instrumentFresh).
	cmd.SysProcAttr.Pdeathsig = unix.SIGCONT
	if e.opt.helper {
		cmd.SysProcAttr.Pdeathsig = unix.SIGKILL
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", argv[0], err)
	}
	pid := cmd.Process.Pid
	e.rootPid, e.launched = pid, true
	ws, err := ptrace.Wait(pid)
	if err != nil || !ws.Stopped() {
		return fmt.Errorf("start %s: it did not stop at exec (%v)", argv[0], err)
	}
	// Hand over: detach leaving it stopped, seize, let it go on.
	if err := ptrace.Detach(pid, int(unix.SIGSTOP)); err != nil {
		return fmt.Errorf("start %s: %w", argv[0], err)
	}
	if _, err := ptrace.WaitStopped(pid); err != nil {
		return fmt.Errorf("start %s: %w", argv[0], err)
	}
	if err := ptrace.Seize(pid); err != nil {
		return fmt.Errorf("start %s: seize: %w", argv[0], err)
	}
	if err := unix.Kill(pid, unix.SIGCONT); err != nil {
		return err
	}
	// The seized, stopped child reports a stop; take it.
	if _, err := ptrace.Wait(pid); err != nil {
		return fmt.Errorf("start %s: %w", argv[0], err)
	}
	p := e.newProcess(pid, newSpace(), nil, model.None, nil)
	t := e.newThread(pid, p, nil, model.None)
	if err := e.instrumentFresh(t, false); err != nil {
		unix.Kill(pid, unix.SIGKILL)
		return err
	}
	e.resume(t, 0)
	return nil
}

// instrumentFresh prepares a process image stopped at its first
// instruction (inExecve: in its exec stop, inside execve): a breakpoint
// at the program entry, where the dynamic linker has mapped the libraries
// and the program is about to run. The injection chain, the first
// out-of-line area and the heal handler go in before the breakpoint, so
// that a profiler killed while the dynamic linker runs, or in the entry's
// trap stop, leaves the breakpoint healable (armFresh). Everything else
// waits for the entry.
func (e *engine) instrumentFresh(t *thread, inExecve bool) error {
	p := t.proc
	entry, err := entryPoint(p.pid)
	if err != nil {
		return err
	}
	p.as.entry = entry
	if inExecve {
		// An injected call at the exec stop would see execve's return
		// value instead of its own: go on to execve's exit first.
		if err := e.leaveExecve(t); err != nil {
			return err
		}
	}
	e.armFresh(t)
	if !inExecve && !e.opt.helper {
		e.clearDeathSignal(t)
	}
	code := make([]byte, 1)
	if err := ptrace.ReadMem(t.tid, entry, code); err != nil {
		return err
	}
	e.healAdd(t.tid, p.as, entry, code[0])
	if err := ptrace.PokeText(t.tid, entry, []byte{0xcc}); err != nil {
		return err
	}
	p.as.bps[entry] = &bp{Addr: entry, Orig: code[0], Fn: model.None, Special: true}
	return nil
}

// leaveExecve takes thread t, in its exec stop, to execve's system-call
// exit stop: its next stop, for signals are delivered only on the way
// back to user mode. Any other stop is left for the loop.
func (e *engine) leaveExecve(t *thread) error {
	if err := ptrace.TraceSyscall(t.tid); err != nil {
		return fmt.Errorf("go on to execve's exit: %w", err)
	}
	ws, err := ptrace.Wait(t.tid)
	if err != nil {
		return fmt.Errorf("go on to execve's exit: %w", err)
	}
	if ws.Stopped() && ws.StopSignal() == unix.SIGTRAP|0x80 {
		if op, err := ptrace.SyscallOp(t.tid); err == nil && op == ptrace.SyscallExit {
			return nil
		}
	}
	if ws.Exited() || ws.Signaled() {
		return fmt.Errorf("pid %d ended in execve", t.proc.pid)
	}
	e.deferStop(t.tid, ws)
	return fmt.Errorf("pid %d stopped in execve (%v), not at its exit", t.proc.pid, ws)
}

// clearDeathSignal takes the parent-death signal launch gave the child
// for its handover away (prctl in the child): the program must not be
// sent a SIGCONT when profile ends.
func (e *engine) clearDeathSignal(t *thread) {
	site := t.proc.as.entry
	if as := t.proc.as; len(as.areas) > 0 {
		site = as.areas[0].base
	}
	if _, err := e.injectCall(t.tid, site, unix.SYS_PRCTL, unix.PR_SET_PDEATHSIG, 0); err != nil {
		e.warn("pid %d: clear its parent-death signal: %v (it gets a SIGCONT when profile ends)", t.proc.pid, err)
	}
}

// armFresh puts into the space of stopped thread t, a fresh image, what
// a profiler killed from here on needs to leave it unharmed (arm). It
// reports whether the area is there (the heal handler's failure is only
// warned of).
func (e *engine) armFresh(t *thread) bool {
	as := t.proc.as
	if len(as.areas) > 0 {
		return true
	}
	areaErr, healErr := e.arm(t.tid, as)
	if areaErr != nil {
		e.warn("pid %d: %v", t.proc.pid, areaErr)
		return false
	}
	if healErr != nil {
		e.warn("pid %d: %v (the target is not protected should profile be killed)", t.proc.pid, healErr)
	}
	return true
}

// arm puts into space as, through stopped thread tid, the injection
// chain, the first out-of-line area (near the program entry) and the heal
// handler: what every probe after them needs. The callers decide what
// each failure costs (a fresh image, an attach beside another tracer).
func (e *engine) arm(tid int, as *space) (areaErr, healErr error) {
	e.setupChain(tid, as)
	if _, err := e.mapArea(tid, as, as.entry, as.entry); err != nil {
		return err, nil
	}
	return nil, e.installHeal(tid, as)
}

// attach seizes every thread of pid, stops them, instruments the process
// and lets it go on.
func (e *engine) attach(pid int) error {
	if err := checkAttachable(pid); err != nil {
		return err
	}
	if err := e.checkProgram(procfs.Exe(pid)); err != nil {
		return fmt.Errorf("attach to pid %d: %w", pid, err)
	}
	e.preopen(pid)
	if e.rootPid == 0 {
		e.rootPid = pid
	}
	seized := map[int]bool{}
	foreign := map[int]int{} // threads another tracer has: its pid
	for {
		tids, err := procfs.Tasks(pid)
		if err != nil {
			return attachError(pid, unix.ESRCH)
		}
		added := false
		for _, tid := range tids {
			if seized[tid] {
				continue
			}
			if err := ptrace.Seize(tid); err != nil {
				if tp := procfs.TracerOf(tid); errors.Is(err, unix.EPERM) && tp != 0 {
					foreign[tid] = tp
					continue
				}
				if len(seized) == 0 && tid == pid {
					return attachError(pid, err)
				}
				continue // it ended meanwhile
			}
			seized[tid] = true
			added = true
		}
		if !added {
			break
		}
	}
	if len(seized) == 0 {
		if len(foreign) > 0 {
			return tracedElsewhere(pid, foreign)
		}
		return attachError(pid, unix.ESRCH)
	}
	p := e.newProcess(pid, newSpace(), nil, model.None, nil)
	e.preloadedUnwind(p)
	began := e.now()
	var first *thread
	for tid := range seized {
		ptrace.Interrupt(tid)
	}
	for _, tid := range sortedTids(seized, pid) {
		ws, err := ptrace.Wait(tid)
		if err != nil || !ws.Stopped() {
			continue // it ended meanwhile
		}
		t := e.newThread(tid, p, nil, model.None)
		if tid == pid {
			first = t
		}
		t.stopped = true // until resumed below: detach must not wait for it
		// A signal came before our interrupt: the thread sits in its
		// delivery stop. The code we run in a thread continues it past
		// that stop without the signal, which would drop it: keep it,
		// take the interrupt's stop, and raise it again (it is delivered
		// when the thread goes on).
		for ws.Stopped() && ptrace.Event(ws) == 0 {
			e.holdSignal(t, ws.StopSignal())
			if ptrace.Cont(tid, 0) != nil {
				break
			}
			if ws, err = ptrace.Wait(tid); err != nil {
				break
			}
		}
		e.reraise(t)
		if !ws.Stopped() {
			e.forget(t) // it ended meanwhile
			if first == t {
				first = nil
			}
			continue
		}
		if isJobStop(ws.StopSignal()) {
			t.listening = true
		}
	}
	if first == nil {
		for _, t := range e.threads {
			first = t
			break
		}
	}
	if first == nil {
		return setupFailed(pid, fmt.Errorf("attach to pid %d: no thread could be stopped", pid))
	}
	// Threads other than the leader: the level is 1 but the spawner is
	// unknown (they were created before we came).
	for _, t := range e.threads {
		if t.tid != pid {
			e.s.SetLevel(t.st, 1, pid)
		}
	}
	// Nothing of ours is in the process yet.
	if len(foreign) > 0 && e.opt.Probes == ProbesTrap {
		e.detachAll()
		return fmt.Errorf("%w: --probes trap cannot trace beside it (its tracer would get our breakpoints' traps): use --probes auto or inline, or detach that tracer", tracedElsewhere(pid, foreign))
	}
	for _, tid := range slices.Sorted(maps.Keys(foreign)) {
		if _, err := p.as.hold(pid, tid, foreign[tid]); err != nil {
			e.detachAll()
			return fmt.Errorf("attach to pid %d: %w, each held by another tracer", pid, err)
		}
	}
	entry, err := entryPoint(pid)
	if err != nil {
		e.detachAll()
		return setupFailed(pid, err)
	}
	p.as.entry = entry
	areaErr, healErr := e.arm(first.tid, p.as)
	if areaErr != nil {
		e.detachAll()
		return setupFailed(pid, fmt.Errorf("attach to pid %d: %w", pid, areaErr))
	}
	if healErr != nil {
		if p.as.holding() {
			e.detachAll()
			return setupFailed(pid, fmt.Errorf("attach to pid %d: %w (a thread another tracer holds cannot be held still without it)", pid, healErr))
		}
		e.warn("pid %d: %v (the target is not protected should profile be killed)", pid, healErr)
	}
	if err := e.holdStill(first.tid, p); err != nil {
		e.detachAll()
		return setupFailed(pid, err)
	}
	e.measureStop(first.tid, p.as)
	e.spaceReady(first.tid, p, slices.Collect(maps.Values(e.threads))...)
	p.as.sole = e.stillSpace(p.as)
	n, err := e.scan(first.tid, p)
	p.as.sole = false
	e.opened = nil // what the scan did not take: a later one opens afresh
	if s := e.stats; s.Leftover.Patches+s.Leftover.Int3s+s.Leftover.Handlers+s.Leftover.Areas+s.Leftover.Kept > 0 {
		areas := fmt.Sprintf("its %d areas unmapped", s.Leftover.Areas)
		if s.Leftover.Kept > 0 {
			areas = fmt.Sprintf("its %d areas stay mapped: %s", s.Leftover.Kept, s.Leftover.Why)
		}
		e.warn("pid %d: a profiler killed while attached had left %d inline patches, %d breakpoints and %d signal handlers (SIGTRAP, SIGURG): undone; %s",
			pid, s.Leftover.Patches, s.Leftover.Int3s, s.Leftover.Handlers, areas)
	}
	if err == nil && n == 0 {
		err = e.nothingToTrace(p)
	}
	if err != nil {
		e.detachAll()
		return setupFailed(pid, err)
	}
	mods := e.unwindModules(p)
	for _, t := range e.threads {
		e.rebuildInFlight(t, mods)
	}
	e.start = time.Now()
	p.as.releaseHeld(first.tid)
	for _, t := range e.threads {
		e.held(t, began)
		t.stopped = false
		switch {
		case t.listening:
			if ptrace.Listen(t.tid) != nil {
				// Our code ran in it: it left its group-stop. Interrupted,
				// it stops again at once, reporting the group-stop while
				// the process is stopped, and the loop listens.
				ptrace.Interrupt(t.tid)
				e.resume(t, 0)
			}
		default:
			e.resume(t, 0)
		}
	}
	e.stats.AttachPause += time.Duration(e.now() - began)
	return nil
}

func isJobStop(sig unix.Signal) bool {
	return sig == unix.SIGSTOP || sig == unix.SIGTSTP || sig == unix.SIGTTIN || sig == unix.SIGTTOU
}

// abandon lets go of whatever a failed start left traced.
func (e *engine) abandon() {
	for _, t := range e.threads {
		ptrace.Detach(t.tid, 0)
	}
	if e.launched && e.rootPid > 0 {
		unix.Kill(e.rootPid, unix.SIGKILL)
		ptrace.Wait(e.rootPid)
	}
}

func (e *engine) elapsed() time.Duration { return time.Since(e.start) }

// report calls the progress callback about four times a second.
func (e *engine) report() {
	if e.opt.Live.Progress == nil {
		return
	}
	el := time.Since(e.s.Base())
	if el < e.nextReport {
		return
	}
	e.nextReport = el + 250*time.Millisecond
	e.opt.Live.Progress(e.liveStats())
}

// liveStats are the running numbers, without the maps the engine keeps
// writing (the caller may keep the copy).
func (e *engine) liveStats() Stats {
	s := e.stats
	s.Probes.Refused = nil
	s.TracedCalls = e.s.TracedCalls()
	s.Elapsed = e.elapsed()
	s.Threads = len(e.threads)
	return s
}

// failStart handles an image that cannot be traced. The first image of a
// session is the user's target: the session fails, and a target we
// launched is killed. A later image (a child's exec of a stripped system
// tool, say) just runs untraced.
func (e *engine) failStart(t *thread, err error) {
	if t.proc.sp.Idx != 0 {
		e.resume(t, 0)
		return
	}
	e.fatal = err
	if e.launched {
		unix.Kill(t.proc.pid, unix.SIGKILL)
	}
	e.resume(t, 0)
}

// sortedTids lists tids in order, the leader first, so threads appear in
// the profile as the process created them.
func sortedTids(set map[int]bool, leader int) []int {
	out := make([]int, 0, len(set))
	for tid := range set {
		if tid != leader {
			out = append(out, tid)
		}
	}
	sort.Ints(out)
	if set[leader] {
		out = append([]int{leader}, out...)
	}
	return out
}

// tracedElsewhere names a thread another tracer holds (foreign: tid to
// its tracer's pid), for an attach that cannot go on beside it.
func tracedElsewhere(pid int, foreign map[int]int) error {
	tid := slices.Min(slices.Collect(maps.Keys(foreign)))
	tp := foreign[tid]
	return fmt.Errorf("attach to pid %d: thread %d (%s) is traced by pid %d (%s), and a thread has one tracer (%d threads held in all)",
		pid, tid, procfs.Comm(tid), tp, procfs.Comm(tp), len(foreign))
}

// ErrExitedDuringAttach: the process ended while the attach was setting
// it up (it was already exiting when it was stopped).
var ErrExitedDuringAttach = errors.New("it exited while profile was attaching")

// setupFailed is the error of an attach to pid whose set-up failed with
// err, or ErrExitedDuringAttach if the process has ended meanwhile: then
// err (an injection into a thread that ended) says nothing to a user.
func setupFailed(pid int, err error) error {
	if st := procfs.Status(pid); st == nil || strings.HasPrefix(st["State"], "Z") || strings.HasPrefix(st["State"], "X") {
		return fmt.Errorf("attach to pid %d: %w", pid, ErrExitedDuringAttach)
	}
	return err
}
