package attach

import (
	"golang.org/x/sys/unix"

	"github.com/profile-dev/profile/attach/internal/ptrace"
	"github.com/profile-dev/profile/instrument"
	"github.com/profile-dev/profile/instrument/unwind"
	"github.com/profile-dev/profile/model"
)

// unwindBound bounds the frames walked from sp: a frame takes at least
// its return address, so the stack mapping holds at most (end-sp)/8 of
// them; a few more allow for signal frames on another stack. The walk
// itself stops where caller frames stop rising.
func (e *engine) unwindBound(t *thread, sp uint64) int {
	if end := e.s.StackEnd(t.st, sp); end > sp {
		return int((end-sp)/8) + 64
	}
	return 1 << 20
}

// unwindThread walks stopped thread t's stack through mods, innermost
// frame first; false if its registers could not be read.
func (e *engine) unwindThread(t *thread, mods []*unwind.Module) ([]unwind.Frame, bool) {
	var regs unix.PtraceRegs
	if ptrace.GetRegs(t.tid, &regs) != nil {
		return nil, false
	}
	return unwind.Unwind(mods, unwind.Regs{RIP: regs.Rip, RSP: regs.Rsp, RBP: regs.Rbp, RBX: regs.Rbx,
		R12: regs.R12, R13: regs.R13, R14: regs.R14, R15: regs.R15}, ptrace.Mem(t.tid).Read, e.unwindBound(t, regs.Rsp)), true
}

// unwindModules loads the call-frame information of every executable
// module mapped in p: a stack passes through libraries we do not trace.
// Modules already instrumented lend their placement; only the others are
// opened here.
func (e *engine) unwindModules(p *process) []*unwind.Module {
	// Kept for the detach's check of the stacks; a change of the loaded
	// libraries (linkMapChanged) drops them.
	if p.unwind != nil {
		return p.unwind
	}
	p.unwind = e.loadUnwindModules(p)
	return p.unwind
}

func (e *engine) loadUnwindModules(p *process) []*unwind.Module {
	maps, err := instrument.ReadMaps(p.pid)
	if err != nil {
		return nil
	}
	known := map[string]uint64{}
	for _, l := range p.as.modules {
		known[l.mod.Path] = l.bias
	}
	return e.loadUnwind(p.pid, maps, known)
}

// loadVDSO loads the call-frame information of p's [vdso], copied out of
// its memory (nil if it has none or cannot be read). By frame pointers,
// a sample in its system call (clock_gettime of a CPU clock) unwound to a
// stale frame; by it, to its caller.
func loadVDSO(pid int, maps []instrument.Mapping) *unwind.Module {
	for _, m := range maps {
		if m.Path != "[vdso]" || !m.Exec() {
			continue
		}
		img := make([]byte, m.End-m.Start)
		if ptrace.Mem(pid).Read(m.Start, img) != nil {
			return nil
		}
		um, err := unwind.LoadImage(img, m.Start, m.End)
		if err != nil {
			return nil
		}
		um.Path = m.Path
		return um
	}
	return nil
}

// loadUnwind loads the call-frame information of every executable module
// in maps of process pid, and of its [vdso]; known holds the biases of
// those already placed.
func (e *engine) loadUnwind(pid int, maps []instrument.Mapping, known map[string]uint64) []*unwind.Module {
	var mods []*unwind.Module
	if e.cfi == nil {
		e.cfi = cfiCache{}
	}
	for _, path := range instrument.LoadedPaths(maps) {
		bias, ok := known[path]
		if !ok {
			m, err := instrument.Open(path)
			if err != nil {
				continue
			}
			if bias, err = m.Bias(maps); err != nil {
				continue
			}
		}
		lo, hi := moduleRange(maps, path)
		if um, err := e.cfi.load(path, bias, lo, hi); err == nil {
			mods = append(mods, um)
		}
	}
	if um := loadVDSO(pid, maps); um != nil {
		mods = append(mods, um)
	}
	return mods
}

// rebuildInFlight reconstructs the activations of traced functions a
// thread was already inside when we attached: unwinding its stack, each
// frame of a traced function becomes an in-flight activation (timed from
// now, no call counted) with a return breakpoint, so time already spent
// blocked or computing there is attributed from the first microsecond.
func (e *engine) rebuildInFlight(t *thread, mods []*unwind.Module) {
	frames, ok := e.unwindThread(t, mods)
	if !ok {
		return
	}
	as := t.proc.as
	now := e.now()
	for i := len(frames) - 1; i >= 0; i-- {
		f := frames[i]
		pc := f.PC
		if i > 0 {
			pc-- // a return address may lie past its caller's last byte
		}
		fn, start := e.tracedAt(as, pc)
		if fn == model.None || f.RA == 0 || e.counted[fn] {
			continue // a counted function has no frames: its caller's time holds it
		}
		if i == 0 && f.PC == start && !probedAtSites(as, start) {
			continue // about to enter: the entry's probe will count it
		}
		if !e.enterInFlight(t, fn, start, f.CFA-8, f.RA, now) {
			continue
		}
		if g, gstart, gsp := e.tailCalled(t, frames, i); g != model.None {
			e.enterInFlight(t, g, gstart, gsp, frames[i-1].RA, now)
		}
	}
}

// enterInFlight opens an in-flight activation of traced function fn
// (entry start) whose return address ret sits at sp. An inline-probed
// frame returns through the return stub; one the shadow stack has no room
// for, through a return breakpoint. False if neither could be set.
func (e *engine) enterInFlight(t *thread, fn int, start, sp, ret uint64, now int64) bool {
	as := t.proc.as
	stub := as.inl != nil && as.inl.Patches[start] != nil && e.hijackInFlight(t, sp, ret)
	if !stub {
		if _, err := e.insertReturn(t.tid, as, ret); err != nil {
			return false
		}
	}
	e.s.EnterInFlight(t.st, fn, sp, ret, now)
	e.ctxEnter(t, fn, sp, stub)
	return true
}

// tracedAt returns the traced function containing pc and its entry.
func (e *engine) tracedAt(as *space, pc uint64) (int, uint64) {
	m := as.moduleAt(pc)
	if m == nil {
		return model.None, 0
	}
	sym, ok := m.mod.Lookup(pc - m.bias)
	if !ok {
		return model.None, 0
	}
	start := sym.Value + m.bias
	if b, ok := as.bps[start]; ok && b.Fn != model.None {
		return b.Fn, start
	}
	if as.inl != nil {
		if p := as.inl.Patches[start]; p != nil && p.Fn != model.None {
			return p.Fn, start
		}
	}
	return model.None, 0
}

// probedAtSites tells whether the function at start has its inline probe
// at its call sites: a thread at its entry has made the call already.
func probedAtSites(as *space, start uint64) bool {
	if as.inl == nil {
		return false
	}
	p := as.inl.Patches[start]
	return p != nil && len(p.Sites) > 0
}
