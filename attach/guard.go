package attach

import (
	"errors"

	"github.com/profile-dev/profile/attach/internal/guard"
)

// guarding is the watcher that mends the targets should the profiler die
// (attach/internal/guard): started with the first heal area, told of each
// process's area until the area is given back or the process is gone.
type guarding struct {
	guard    *guard.Guard
	guardOff bool // it could not start, or stopped listening: not tried again
}

// watchHeal has the watcher watch the heal area of space as, in process
// pid.
func (e *engine) watchHeal(pid int, as *space) {
	if as.heal == nil || as.guarded != 0 || e.guardOff {
		return
	}
	if e.guard == nil {
		g, err := guard.Start()
		if err != nil {
			e.guardOff = true
			e.warn("%v: should profile be killed, a thread that blocks SIGTRAP could still take one of its breakpoints", err)
			return
		}
		e.guard = g
	}
	id, err := e.guard.Watch(pid, as.heal.Base)
	switch {
	case err == nil:
		as.guarded = id
	case errors.Is(err, guard.ErrLost):
		e.loseGuard(err)
	}
	// Otherwise the process is gone already: nothing to watch.
}

// loseGuard gives up a watcher that stopped listening (gone, or stopped
// with its socket full): the targets' handlers alone from now on, with
// one warning. It is killed first: its socket's end must not make it
// mend what we trace.
func (e *engine) loseGuard(err error) {
	e.warn("%v: should profile be killed, a thread that blocks SIGTRAP could still take one of its breakpoints", err)
	e.guardOff = true
	e.guard.Abandon()
	e.guard = nil
}

// unwatchHeal tells the watcher that space as is not its to mend any more.
func (e *engine) unwatchHeal(as *space) {
	if as.guarded == 0 || e.guard == nil {
		return
	}
	if err := e.guard.Forget(as.guarded); errors.Is(err, guard.ErrLost) {
		e.loseGuard(err)
	}
	as.guarded = 0
}

// closeGuard ends the watcher with the session: whatever is left is the
// targets' own handler's, as it was before the watcher.
func (e *engine) closeGuard() {
	if e.guard != nil {
		e.guard.Close()
		e.guard = nil
	}
}
