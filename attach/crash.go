package attach

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/profile-dev/profile/model"
)

// crashing lists the signals of a crash: the program's own fault, which
// kills it (with a core) unless it handles them. Other fatal signals (a
// SIGTERM from outside) end the process too; the profile then says so.
func crashing(sig syscall.Signal) bool {
	switch sig {
	case unix.SIGSEGV, unix.SIGBUS, unix.SIGILL, unix.SIGFPE, unix.SIGABRT, unix.SIGSYS, unix.SIGTRAP:
		return true
	}
	return false
}

// crashSignal tells whether delivering sig to t's process is a crash: a
// crashing signal that the process neither catches nor ignores.
func crashSignal(t *thread, sig syscall.Signal) bool {
	if !crashing(sig) {
		return false
	}
	if h := t.proc.as.heal; h != nil && sig == unix.SIGTRAP {
		// Our handler is the disposition now; the program's own decides.
		return h.old.handler == 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", t.tid))
	if err != nil {
		return false
	}
	bit := uint64(1) << (uint(sig) - 1)
	for _, line := range strings.Split(string(b), "\n") {
		for _, field := range []string{"SigCgt:", "SigIgn:"} {
			if v, ok := strings.CutPrefix(line, field); ok {
				mask, _ := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
				if mask&bit != 0 {
					return false
				}
			}
		}
	}
	return true
}

// crash records a fatal signal about to end t's process, with the
// thread's stack, and saves the profile so far before letting it through.
func (e *engine) crash(t *thread, sig syscall.Signal) {
	c := &model.Crash{Pid: t.proc.pid, Tid: t.tid, Signal: signalName(sig)}
	if si, err := getSigInfo(t.tid); err == nil {
		c.Addr = si.Addr
	}
	var regs unix.PtraceRegs
	if getRegs(t.tid, &regs) == nil {
		c.Stack = append(c.Stack, e.symbolize(t.proc.as, regs.Rip))
	}
	st := t.rec.Stack()
	for i := len(st) - 1; i >= 0; i-- {
		c.Stack = append(c.Stack, e.prof.FuncName(st[i]))
	}
	e.prof.Meta.Crash = c
	e.prof.Meta.Partial = true
	e.prof.Meta.PartialReason = "target crashed: " + c.Signal
	if e.opt.OnCrash != nil {
		e.opt.OnCrash(e.snapshot())
	}
}

// symbolize names a runtime address as module:function+0xoff.
func (e *engine) symbolize(as *space, pc uint64) string {
	if m := as.moduleAt(pc); m != nil {
		if s, ok := m.mod.Lookup(pc - m.bias); ok {
			return fmt.Sprintf("%s:%s+%#x", baseName(m.mod.Path), s.Name, pc-m.bias-s.Value)
		}
		return fmt.Sprintf("%s+%#x", baseName(m.mod.Path), pc-m.bias)
	}
	return fmt.Sprintf("%#x", pc)
}

// snapshot is the profile as if every thread ended now, the engine going on.
func (e *engine) snapshot() *model.Profile {
	p := *e.prof
	p.Threads = append([]model.Thread(nil), e.prof.Threads...)
	p.Processes = append([]model.Process(nil), e.prof.Processes...)
	now := e.now()
	for _, t := range e.threads {
		if !t.done {
			p.Threads[t.idx].Nodes, p.Threads[t.idx].TracedNs = t.rec.Snapshot(now)
		}
	}
	for i := range p.Threads {
		if len(p.Threads[i].Nodes) == 0 {
			p.Threads[i].Nodes = []model.Node{{Func: model.StartFunc, Parent: model.None}}
		}
	}
	p.Meta.DurationNs = now
	p.Meta.Stops, p.Meta.TracedCalls, p.Meta.Breakpoints = e.stats.Stops, e.stats.TracedCalls, e.stats.Breakpoints
	return &p
}
