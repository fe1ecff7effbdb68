package attach

import (
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/profile-dev/profile/attach/internal/ptrace"
)

// detachAll stops every thread, takes every breakpoint out, moves threads
// that are out of line back to the original code, gives the program its
// SIGTRAP disposition back, unmaps the areas and lets the target go,
// running as before. Threads already in a stop of ours (a failed attach)
// are not interrupted again: they would never report another stop.
func (e *engine) detachAll() {
	e.detaching = true
	for _, t := range e.threads {
		if t.stopped {
			continue
		}
		if err := e.stopForDetach(t); err != nil {
			if !errors.Is(err, unix.ESRCH) {
				e.warn("detach: cannot stop thread %d: %v", t.tid, err)
			}
			e.forget(t)
		}
	}
	// Handle stops as usual until every thread sits in our interrupt
	// stop: breakpoint hits on the way are accounted and stepped.
	for !e.allStopped() {
		tid, ws, err := e.nextStop()
		if err != nil {
			break
		}
		e.handleStop(tid, ws)
	}
	held := e.now()
	spaces := map[*space]*thread{}
	for _, t := range e.threads {
		if _, ok := spaces[t.proc.as]; !ok {
			spaces[t.proc.as] = t
		}
	}
	for as, t := range spaces {
		if as.holding() {
			e.holdNew(as, t.proc) // made by a held thread since the last pause
		}
		if as.holding() && as.textChanged() && !e.parkForDetach(t.proc, as) {
			continue // left as a killed profiler leaves it
		}
		// Nothing runs in the space: a patch within a page goes back in
		// one write.
		as.sole = e.stillSpace(as)
		for _, k := range e.probes {
			k.detach(t.tid, as)
		}
		as.sole = false
		// After our probes are out: a return address our stubs took may
		// be a killed profiler's return stub, put back only now.
		e.reclaimAtDetach(t, as)
	}
	for as, t := range spaces {
		if as.park != nil && as.park.installed && !as.leftInPlace {
			as.releaseHeld(t.tid)
			e.uninstallPark(t.tid, as)
			if !e.handlersLeft(t.tid, as) {
				as.keepHeal = true
			}
		}
	}
	for as, t := range spaces {
		// The areas before the heal area, which lists them (killed in
		// between, we leave a heal area a later attach finds and its
		// list), and the one holding the injection site last, which a
		// later attach finds by its first bytes.
		if !as.keepAreas {
			for i := len(as.areas) - 1; i >= 1; i-- {
				e.unmap(t.tid, as.areas[0].base, as.areas[i].base, as.areas[i].size)
			}
		}
		if len(as.areas) > 0 && !as.leftInPlace {
			e.uninstallHeal(t.tid, as)
		}
		if as.heal == nil && !as.keepAreas && len(as.areas) > 0 && as.entry != 0 {
			e.unmap(t.tid, as.entry, as.areas[0].base, as.areas[0].size)
		}
		as.chain.Remove(t.tid)
		as.closeText()
		as.bps, as.areas = map[uint64]*bp{}, nil
	}
	if len(e.threads) > 0 {
		e.stats.DetachPause = time.Duration(e.now() - held)
	}
	for _, t := range e.threads {
		e.finishThread(t)
		if err := ptrace.Detach(t.tid, t.pendingSig); err != nil && err != unix.ESRCH {
			e.warn("detach %d: %v", t.tid, err)
		}
	}
	e.threads = map[int]*thread{}
}

// restoreText puts every original byte back, checking each: a byte that
// cannot be restored is retried, then reported with its address (an int3
// left behind would kill the target at its next pass).
func (e *engine) restoreText(tid int, as *space) {
	for _, b := range as.bps {
		var err error
		for try := 0; try < 3; try++ {
			if err = as.poke(tid, b.Addr, []byte{b.Orig}); err == nil {
				var got [1]byte
				if err = ptrace.ReadMem(tid, b.Addr, got[:]); err == nil && got[0] != b.Orig {
					err = fmt.Errorf("reads back %#x", got[0])
				}
			}
			if err == nil {
				break
			}
		}
		if err != nil {
			e.warn("could not restore the original byte at %#x: %v", b.Addr, err)
		}
	}
}

// stopForDetach asks a thread to stop so that it can be let go. A vfork
// child is not stopped: its parent waits in the kernel, unable to stop,
// until the child execs or exits, so the child runs on to there (its
// probes handled as usual) and is let go at its exec.
func (e *engine) stopForDetach(t *thread) error {
	if t.vforkOf != nil {
		return nil
	}
	return ptrace.Interrupt(t.tid)
}

func (e *engine) allStopped() bool {
	for _, t := range e.threads {
		if !t.stopped {
			return false
		}
	}
	return true
}

// leaveArea moves a thread whose pc is in an out-of-line slot to the
// equivalent place in the original code.
func (e *engine) leaveArea(t *thread) {
	var regs unix.PtraceRegs
	if ptrace.GetRegs(t.tid, &regs) != nil {
		return
	}
	if t.proc.as.areaOf(regs.Rip) == nil {
		return
	}
	for _, b := range t.proc.as.bps {
		if !b.InCopy(regs.Rip) {
			continue
		}
		if pc, ok := b.Back(regs.Rip); ok {
			regs.Rip = pc
			ptrace.SetRegs(t.tid, &regs)
		}
		return
	}
}

func (e *engine) warn(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "profile: "+format+"\n", args...)
}
