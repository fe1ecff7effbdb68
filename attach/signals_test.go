package attach

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/profile-dev/profile/attach/internal/procfs"

	"github.com/profile-dev/profile/internal/workload"
)

// startSignals starts the signals workload and waits for its "ready": its
// workers run, its handlers are in place. The rest of its output comes
// from the returned function once it has exited.
func startSignals(t *testing.T, args ...string) (*exec.Cmd, func() string) {
	t.Helper()
	bin, err := workload.Path("signals")
	if err != nil {
		t.Fatal(err)
	}
	// A pipe of our own, not StdoutPipe: Wait closes that one as the
	// program exits, maybe before its last line was read.
	rd, wr, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout = wr
	err = cmd.Start()
	wr.Close()
	if err != nil {
		rd.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait(); rd.Close() })
	r := bufio.NewReader(rd)
	if line, err := r.ReadString('\n'); err != nil || line != "signals: ready\n" {
		t.Fatalf("signals: %q, %v", line, err)
	}
	rest := make(chan string, 1)
	go func() { b, _ := io.ReadAll(r); rest <- string(b) }()
	return cmd, func() string { return <-rest }
}

// waitExit waits up to d for cmd to end: false if it did not.
func waitExit(cmd *exec.Cmd, d time.Duration) bool {
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}

// Signals sent to a target while the profiler attaches reach it as if
// untraced. At 20 points 15 ms apart from the start of an attach (set-up
// takes 40-200 ms here: stopping the threads, injections, patching), a
// SIGUSR1 and 20 ms later a SIGTERM (even points) or SIGINT (odd): the
// program handles each, says so and exits 0. A signal the tracer dropped
// shows as usr1=0, or as a program that never ends.
func TestSignalsDuringAttachArrive(t *testing.T) {
	forEachProbe(t, func(t *testing.T, opt Options) {
		for i := range 20 {
			end, name := syscall.SIGTERM, "TERM"
			if i%2 == 1 {
				end, name = syscall.SIGINT, "INT"
			}
			cmd, output := startSignals(t, "3", "20")
			pid := cmd.Process.Pid
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			type res struct {
				r   *Result
				err error
			}
			attached := make(chan res, 1)
			go func() { r, err := Attach(ctx, pid, opt); attached <- res{r, err} }()
			time.Sleep(time.Duration(i) * 15 * time.Millisecond)
			syscall.Kill(pid, syscall.SIGUSR1)
			time.Sleep(20 * time.Millisecond)
			syscall.Kill(pid, end)
			// Attach returns when the program has ended (this process,
			// its parent, must not reap it first: the tracer would wait
			// for it forever).
			var got res
			select {
			case got = <-attached:
			case <-time.After(8 * time.Second):
				ids, _ := procfs.Tasks(pid)
				for _, id := range ids {
					st := procfs.Status(id)
					t.Logf("thread %d: %s, pending %s, shared %s, blocked %s", id, st["State"], st["SigPnd"], st["ShdPnd"], st["SigBlk"])
				}
				cancel()
				<-attached
				t.Fatalf("point %d (%d ms): SIGUSR1 then SIG%s, and the program did not end", i, 15*i, name)
			}
			cancel()
			want := "signals: usr1=1 end=" + name + "\n"
			if got.err != nil {
				// Both signals came before the attach stopped the
				// program (it reads files first): it acted on them
				// untraced, and the attach found it gone or exiting.
				// (Its exit status is ours to read only if the tracer,
				// in this process, did not reap it.)
				waitExit(cmd, 5*time.Second)
				exited := cmd.ProcessState == nil || cmd.ProcessState.ExitCode() == 0
				gone := errors.Is(got.err, ErrExitedDuringAttach) || strings.Contains(got.err.Error(), "zombie")
				if !gone || !exited || output() != want {
					t.Fatalf("point %d: attach: %v; the program: %v, %q", i, got.err, cmd.ProcessState, output())
				}
				t.Logf("point %d (%d ms): the program ended before the attach stopped it (%v)", i, 15*i, got.err)
				continue
			}
			if out := output(); out != want || !got.r.Exited || got.r.ExitCode != 0 {
				t.Errorf("point %d (%d ms): %q, exited %v with %d; untraced: %q, exit 0", i, 15*i, out, got.r.Exited, got.r.ExitCode, want)
			}
		}
	})
}

// A process stopped by job control stays stopped while attached: no
// thread runs and no call is recorded. Continued while attached, its
// calls start.
func TestAttachToAStoppedProcess(t *testing.T) {
	forEachProbe(t, func(t *testing.T, opt Options) {
		cmd, output := startSignals(t, "3", "20")
		pid := cmd.Process.Pid
		syscall.Kill(pid, syscall.SIGSTOP)
		waitState(t, pid, "T")
		// Its workers spin: running, they take 100 user ticks a second.
		// Our own code run in it (system calls, a few instructions) may
		// take one.
		u0, _ := procTicks(pid)
		r := attachForOpt(t, pid, 1500*time.Millisecond, opt)
		if r.Stats.TracedCalls != 0 {
			t.Errorf("stopped process: %d calls recorded", r.Stats.TracedCalls)
		}
		time.Sleep(100 * time.Millisecond)
		if u1, _ := procTicks(pid); u1 > u0+1 {
			t.Errorf("the stopped process ran: user ticks %d -> %d", u0, u1)
		}
		ids, err := procfs.Tasks(pid)
		if err != nil || len(ids) != 4 {
			t.Fatalf("threads %v, %v: want main and 3 workers", ids, err)
		}
		for _, task := range ids {
			if s := procfs.Status(task)["State"]; !strings.HasPrefix(s, "T") {
				t.Errorf("after the detach thread %d is %q, want stopped", task, s)
			}
		}
		// Attached again, continued 500 ms in: its calls are recorded.
		go func() {
			time.Sleep(500 * time.Millisecond)
			syscall.Kill(pid, syscall.SIGCONT)
		}()
		r = attachForOpt(t, pid, 1500*time.Millisecond, opt)
		if r.Stats.TracedCalls == 0 {
			t.Error("continued while attached: no call recorded")
		}
		syscall.Kill(pid, syscall.SIGTERM)
		if !waitExit(cmd, 5*time.Second) {
			t.Fatal("SIGTERM: the program did not end")
		}
		if out := output(); out != "signals: usr1=0 end=TERM\n" {
			t.Errorf("output %q, %v", out, cmd.ProcessState)
		}
	})
}

// waitState waits up to 2 s for every thread of pid to be in state (the
// first letter of /proc's State).
func waitState(t *testing.T, pid int, state string) {
	t.Helper()
	for range 200 {
		ids, _ := procfs.Tasks(pid)
		all := len(ids) > 0
		for _, id := range ids {
			all = all && strings.HasPrefix(procfs.Status(id)["State"], state)
		}
		if all {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("pid %d: threads not in state %s", pid, state)
}

// holdThread traces thread tid alone, as `strace -p TID` would: every stop
// is continued, a signal passed on (SIGURG swallowed if swallowURG, as a
// debugger may), until the thread ends.
func holdThread(tid int, swallowURG bool) {
	runtime.LockOSThread()
	if err := unix.PtraceSeize(tid); err != nil {
		fmt.Fprintln(os.Stderr, "hold:", err)
		os.Exit(1)
	}
	for {
		var ws unix.WaitStatus
		if _, err := unix.Wait4(tid, &ws, unix.WALL, nil); err != nil || ws.Exited() || ws.Signaled() {
			return
		}
		sig := 0
		if ws.Stopped() && ws.TrapCause() <= 0 {
			sig = int(ws.StopSignal())
		}
		if swallowURG && sig == int(unix.SIGURG) {
			sig = 0
		}
		unix.PtraceCont(tid, sig)
	}
}
