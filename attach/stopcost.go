package attach

import (
	"slices"
	"time"

	"golang.org/x/sys/unix"

	"github.com/profile-dev/profile/attach/internal/procfs"
	"github.com/profile-dev/profile/attach/internal/ptrace"
)

// measureStop times the bare ptrace stop on the target itself: the
// stopped thread runs `syscall; int3` (getpid) from the first area's slot
// 0, so each round is SETREGS, CONT, the stop, wait4 and GETREGS — the
// least any breakpoint costs. The median of a few rounds goes into the
// profile and is the floor the benchmarks compare against. The
// time from CONT to wait4's return (the thread woken, its system call and
// trap, the tracer woken), less the thread's wait for a CPU, is what the
// kernel's work costs the thread at every stop (stopWake, a low reading of
// the rounds), the thread's time on a CPU meanwhile the kernel's CPU time
// (stopKernel, the median): hit takes them out of the times (stopCost).
func (e *engine) measureStop(tid int, as *space) {
	if len(as.areas) == 0 {
		return
	}
	var saved, regs unix.PtraceRegs
	if ptrace.GetRegs(tid, &saved) != nil {
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
	var took, wake, ran []time.Duration
	var sched procfs.SchedStat
	defer sched.Close()
	pid := tid
	if t != nil {
		pid = t.proc.pid
	}
	sched.Since(pid, tid)
	for i := 0; i < rounds; i++ {
		regs = saved
		regs.Rip, regs.Rax, regs.Orig_rax = as.areas[0].base, unix.SYS_GETPID, ^uint64(0)
		t0 := time.Now()
		if ptrace.SetRegs(tid, &regs) != nil || ptrace.Cont(tid, 0) != nil {
			break
		}
		t1 := time.Now()
		if t != nil {
			t.unreaped = false
		}
		ws, err := ptrace.Wait(tid)
		if err != nil || !ws.Stopped() || ws.StopSignal() != unix.SIGTRAP || ptrace.Event(ws) != 0 {
			if err == nil && ws.Stopped() {
				e.deferStop(tid, ws)
			}
			break
		}
		// The kernel's part: without the wait for a CPU, which each stop
		// reads for itself.
		d, _ := sched.Since(pid, tid)
		wake = append(wake, time.Since(t1)-time.Duration(d.Queued))
		ran = append(ran, time.Duration(d.Ran))
		ptrace.GetRegs(tid, &regs)
		took = append(took, time.Since(t0))
	}
	ptrace.SetRegs(tid, &restore)
	if len(took) == 0 {
		return
	}
	slices.Sort(took)
	slices.Sort(wake)
	slices.Sort(ran)
	e.s.Profile().Meta.StopOverheadNs = int64(took[len(took)/2])
	// A low reading, not the median: a round the scheduler delayed would
	// make every stop's share too large, and times too small.
	e.stopWake = int64(wake[len(wake)/5])
	e.stopKernel = min(int64(ran[len(ran)/2]), e.stopWake)
}
