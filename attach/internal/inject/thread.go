package inject

import "golang.org/x/sys/unix"

// Thread is what an injection needs of the tracee loop's view of the
// thread it runs in.
type Thread interface {
	// Restore returns the registers the thread is to be given back,
	// from the ones it had when the injection began.
	Restore(saved unix.PtraceRegs) unix.PtraceRegs
	// Resuming: the thread is about to run from rip.
	Resuming(rip uint64)
	// Resumed: its stop was reaped by the resume.
	Resumed()
	// Guard keeps restore where a handler in the target finds it should
	// the tracer die before the injection at site ends (a no-op where
	// nothing guards the site); the returned function drops the guard.
	Guard(site uint64, restore *unix.PtraceRegs) func()
	// Defer: a stop that is not the injection's, for the loop to handle
	// once it is over.
	Defer(ws unix.WaitStatus)
	// SignalsHeld: signals wait to be delivered to the thread.
	SignalsHeld() bool
	// Done: the injection is over.
	Done()
	// PokeText writes b at addr in the thread's text (ptrace.PokeText),
	// through the process's memory the tracer keeps open: an open of
	// /proc/PID/mem for each injection's write was a tenth of the opens a
	// new process cost the tracer.
	PokeText(addr uint64, b []byte) error
}
