package attach

import (
	"fmt"
	"os/exec"
	"runtime"
	"time"

	"golang.org/x/sys/unix"

	"github.com/profile-dev/profile/attach/internal/ptrace"
)

// StopFloor measures the bare cost of one ptrace stop, for benchmarks:
// prog must execute n int3 instructions and exit. Each stop gets what any
// breakpoint needs at least — wait4, GETREGS, SETREGS, CONT — and nothing
// else. It returns the mean over the n stops.
func StopFloor(prog string, n int) (time.Duration, error) {
	type out struct {
		d   time.Duration
		err error
	}
	ch := make(chan out, 1)
	go func() {
		runtime.LockOSThread()
		d, err := stopFloor(prog, n)
		ch <- out{d, err}
	}()
	o := <-ch
	return o.d, o.err
}

func stopFloor(prog string, n int) (time.Duration, error) {
	cmd := exec.Command(prog, fmt.Sprint(n))
	ptrace.StartTraced(cmd)
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	pid := cmd.Process.Pid
	if _, err := ptrace.Wait(pid); err != nil {
		return 0, err
	}
	var regs unix.PtraceRegs
	if err := ptrace.Cont(pid, 0); err != nil {
		return 0, err
	}
	t0 := time.Now()
	for i := 0; i < n; i++ {
		ws, err := ptrace.Wait(pid)
		if err != nil || !ws.Stopped() {
			return 0, fmt.Errorf("stop %d: %v (%v)", i, ws, err)
		}
		ptrace.GetRegs(pid, &regs)
		ptrace.SetRegs(pid, &regs)
		ptrace.Cont(pid, 0)
	}
	d := time.Since(t0) / time.Duration(n)
	ptrace.Wait(pid)
	return d, nil
}
