package attach

import (
	"errors"

	"golang.org/x/sys/unix"

	"github.com/profile-dev/profile/attach/internal/ptrace"
)

// pauseAll stops every thread of every traced process and keeps it
// stopped, handling the stops on the way as usual (a breakpoint hit is
// accounted and stepped, a signal delivered), as detachAll does; new
// threads and processes are held at their first stop. It returns the
// time the pause began, for held, or false when a vfork child borrows a
// parent's memory: it cannot be stopped (its parent waits in the kernel
// until it execs), so code the two share must not change now.
//
// Patching a running program needs every thread stopped: a thread must
// not be inside the bytes a patch replaces, and its rip says where it is
// only while it is stopped.
func (e *engine) pauseAll() (int64, bool) {
	for _, t := range e.threads {
		if t.vforkOf != nil {
			return 0, false
		}
	}
	from := e.now()
	e.pausing = true
	for {
		for _, t := range e.threads {
			if t.stopped || t.asked {
				continue
			}
			// A thread resumed on the way (after a breakpoint that was
			// hit as it was interrupted, or created since) is asked again.
			if err := ptrace.Interrupt(t.tid); err != nil {
				if errors.Is(err, unix.ESRCH) {
					continue // its exit is on its way
				}
				e.warn("pause: cannot stop thread %d: %v", t.tid, err)
			}
			t.asked = true
		}
		if e.allStopped() {
			break
		}
		tid, ws, err := e.nextStop()
		if err != nil {
			break
		}
		if e.waker(tid) {
			continue
		}
		e.handleStop(tid, ws)
		for _, t := range e.threads {
			if t.vforkOf != nil {
				// A vfork while pausing: let the pair run to the
				// child's exec, and patch at a later pause.
				e.resumeAll(from)
				return 0, false
			}
		}
	}
	if err := e.parkAll(); err != nil {
		e.resumeAll(from)
		return 0, false
	}
	return from, true
}

// resumeAll lets every thread pauseAll stopped go on: a thread that was
// in a job-control stop goes back to it.
func (e *engine) resumeAll(from int64) {
	e.releaseAll()
	e.pausing = false
	e.stats.Expand.Pauses++
	e.stats.Expand.PausedNs += e.now() - from
	for _, t := range e.threads {
		t.asked = false
		if !t.stopped {
			continue
		}
		t.stopped = false
		e.held(t, from)
		if t.listening {
			if ptrace.Listen(t.tid) == nil {
				continue
			}
			t.listening = false
		}
		e.resume(t, 0)
	}
}
