package attach

import (
	"sort"
	"time"

	"golang.org/x/sys/unix"
)

// measureStop times the bare ptrace stop on the target itself: the
// stopped thread runs `syscall; int3` (getpid) from the first area's slot
// 0, so each round is SETREGS, CONT, the stop, wait4 and GETREGS — the
// least any breakpoint costs. The median of a few rounds goes into the
// profile (§5) and is the floor the benchmarks compare against.
func (e *engine) measureStop(tid int, as *space) {
	if len(as.areas) == 0 {
		return
	}
	var saved, regs unix.PtraceRegs
	if getRegs(tid, &saved) != nil {
		return
	}
	defer e.rearm(tid)
	t := e.threads[tid]
	restore := restoreRegs(t, saved)
	if t != nil {
		e.healSave(t, &restore)
		defer e.healClear(t)
		e.markRip(t, as.areas[0].base)
	}
	const rounds = 15
	var took []time.Duration
	for i := 0; i < rounds; i++ {
		regs = saved
		regs.Rip, regs.Rax, regs.Orig_rax = as.areas[0].base, unix.SYS_GETPID, ^uint64(0)
		t0 := time.Now()
		if setRegs(tid, &regs) != nil || cont(tid, 0) != nil {
			break
		}
		if t != nil {
			t.unreaped = false
		}
		ws, err := waitTid(tid)
		if err != nil || !ws.Stopped() || ws.StopSignal() != unix.SIGTRAP || event(ws) != 0 {
			if err == nil && ws.Stopped() {
				e.deferStop(tid, ws)
			}
			break
		}
		getRegs(tid, &regs)
		took = append(took, time.Since(t0))
	}
	setRegs(tid, &restore)
	if len(took) == 0 {
		return
	}
	sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
	e.s.Profile().Meta.StopOverheadNs = int64(took[len(took)/2])
}
