package attach

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/profile-dev/profile/attach/internal/procfs"
	"github.com/profile-dev/profile/instrument"
	"github.com/profile-dev/profile/internal/proctext"
	"github.com/profile-dev/profile/internal/workload"
	"github.com/profile-dev/profile/model"
)

// heldwork is a running heldwork workload: rounds start with a line on in
// and end with a line on out.
type heldwork struct {
	cmd   *exec.Cmd
	in    io.WriteCloser
	out   *bufio.Reader
	tids  []int
	calls int
	round int
}

// startHeldwork starts heldwork with threads workers of calls calls each
// round, and reads its workers' thread ids.
func startHeldwork(t *testing.T, threads, calls int) *heldwork {
	t.Helper()
	bin, err := workload.Path("heldwork")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, strconv.Itoa(threads), strconv.Itoa(calls))
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	// A pipe of our own, not StdoutPipe: Wait closes that one as the
	// program exits, maybe before its last line was read.
	rd, wr, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = wr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	wr.Close()
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait(); rd.Close() })
	h := &heldwork{cmd: cmd, in: in, out: bufio.NewReader(rd), calls: calls}
	line := h.line(t)
	for _, f := range strings.Fields(strings.TrimPrefix(line, "heldwork: tids")) {
		tid, _ := strconv.Atoi(f)
		h.tids = append(h.tids, tid)
	}
	if len(h.tids) != threads {
		t.Fatalf("heldwork: %q", line)
	}
	return h
}

// line reads the program's next line; a program stuck for 30 s (a held
// thread that never leaves its park) fails the test rather than hang it.
func (h *heldwork) line(t *testing.T) string {
	t.Helper()
	got := make(chan string, 1)
	go func() { s, _ := h.out.ReadString('\n'); got <- s }()
	select {
	case s := <-got:
		return s
	case <-time.After(30 * time.Second):
		t.Fatal("heldwork: no line in 30 s")
		return ""
	}
}

// run runs one round and checks its sum against heldRound.
func (h *heldwork) run(t *testing.T) {
	t.Helper()
	h.round++
	io.WriteString(h.in, "go\n")
	want := fmt.Sprintf("round %d: %d\n", h.round, heldRound(len(h.tids), h.calls))
	if line := h.line(t); line != want {
		t.Fatalf("round %d: %q, want %q", h.round, line, want)
	}
}

// finish ends the input and checks the program ends well.
func (h *heldwork) finish(t *testing.T) {
	t.Helper()
	h.in.Close()
	if line := h.line(t); line != "heldwork: done\n" {
		t.Errorf("at the end: %q", line)
	}
	if !waitExit(h.cmd, 5*time.Second) || h.cmd.ProcessState.ExitCode() != 0 {
		t.Errorf("the program did not end well: %v", h.cmd.ProcessState)
	}
}

// heldRound is heldwork's "round R: S" sum for threads workers of calls
// calls each.
func heldRound(threads, calls int) uint64 {
	var sum uint64
	for me := range threads {
		x := uint64(me) + 1
		for range calls {
			x = x*6364136223846793005 + 1442695040888963407
		}
		sum += x
	}
	return sum
}

// holdWith makes thread tid another tracer's: strace's when strace names
// its binary, else holdThread's (as strace -p does: every stop continued,
// signals passed on), with env.
func holdWith(t *testing.T, strace string, tid int, env ...string) *exec.Cmd {
	t.Helper()
	var holder *exec.Cmd
	if strace != "" {
		holder = exec.Command(strace, "-q", "-o", "/dev/null", "-p", strconv.Itoa(tid))
		if err := holder.Start(); err != nil {
			t.Fatal(err)
		}
		for j := 0; j < 500 && procfs.TracerOf(tid) != holder.Process.Pid; j++ {
			time.Sleep(5 * time.Millisecond)
		}
	} else {
		holder = startTracer(t, tid, nil, append(env, "PROFILE_TEST_HOLD_TID="+strconv.Itoa(tid))...)
	}
	t.Cleanup(func() { holder.Process.Kill(); holder.Wait() })
	if procfs.TracerOf(tid) != holder.Process.Pid {
		t.Fatalf("thread %d is not held by %d", tid, holder.Process.Pid)
	}
	return holder
}

// parkedAt says where thread tid of pid is: "parked" when it is blocked
// in a system call made from anonymous executable memory (our park
// handler), else what /proc/TID/syscall shows. A running thread is looked
// at again, for up to 100 ms.
func parkedAt(pid, tid int) string {
	var last string
	for range 1000 {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/syscall", pid, tid))
		last = strings.TrimSpace(string(b))
		f := strings.Fields(last)
		if len(f) == 9 {
			pc, _ := strconv.ParseUint(strings.TrimPrefix(f[8], "0x"), 16, 64)
			maps, _ := instrument.ReadMaps(pid)
			for _, m := range maps {
				if m.Exec() && m.Path == "" && pc >= m.Start && pc < m.End {
					return "parked (system call " + f[0] + ")"
				}
			}
			return "at pc " + f[8] + " (system call " + f[0] + ")"
		}
		time.Sleep(100 * time.Microsecond)
	}
	return last
}

// A thread another tracer holds (strace -p TID) is left out: the attach
// goes on and names it and its tracer, on stderr and in the profile. Its
// calls go through our probes unrecorded; at every pause for code to
// change (the set-up, each move to counting, the detach) it is parked in
// our handler, never running the program's code. The other threads'
// calls, made while attached, are exact; the program's results are an
// untraced run's; the held thread stays its tracer's; after the detach
// the text is the file's and none of our areas is mapped. --probes trap
// is refused, nothing of ours written: its tracer would get our traps.
func TestThreadHeldByAnotherTracer(t *testing.T) {
	const threads, calls, rounds = 3, 1000000, 4
	for _, kind := range []string{ProbesAuto, ProbesInline, ProbesTrap} {
		t.Run(kind, func(t *testing.T) { heldByAnother(t, kind, "", threads, calls, rounds) })
	}
	// strace itself, which stops the thread at each of its system calls.
	t.Run("strace", func(t *testing.T) {
		strace, err := exec.LookPath("strace")
		if err != nil {
			t.Skip("no strace (Debian package strace)")
		}
		heldByAnother(t, ProbesAuto, strace, threads, calls/4, rounds)
	})
}

func heldByAnother(t *testing.T, kind, strace string, threads, calls, rounds int) {
	opt := defaultOptions(t)
	// Sampled, as the command line does: short functions move to
	// counting mid-run, each move a pause that parks the held thread.
	opt.Probes, opt.SamplePeriod = kind, 250*time.Microsecond
	w := startHeldwork(t, threads, calls)
	pid, held := w.cmd.Process.Pid, w.tids[threads-1]
	holder := holdWith(t, strace, held)
	if kind == ProbesTrap {
		_, err := Attach(context.Background(), pid, opt)
		want := fmt.Sprintf("thread %d (heldwork) is traced by pid %d", held, holder.Process.Pid)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "--probes trap") {
			t.Fatalf("attach: %v; want an error that says %q and --probes trap", err, want)
		}
		if err := proctext.MatchesDisk(pid); err != nil {
			t.Errorf("after the refused attach: %v", err)
		}
		w.run(t)
		w.finish(t)
		return
	}
	var checks, bad []string
	opt.paused = func() {
		where := parkedAt(pid, held)
		checks = append(checks, where)
		if !strings.HasPrefix(where, "parked") {
			bad = append(bad, where)
		}
	}
	stop := attachRunning(t, pid, opt)
	for range rounds {
		w.run(t)
	}
	r, err := stop()
	if err != nil {
		t.Fatalf("attach: %v", err)
	}
	p := r.Profile
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	named := fmt.Sprintf("thread %d (heldwork), traced by pid %d (%s)", held, holder.Process.Pid, procfs.Comm(holder.Process.Pid))
	if !slices.ContainsFunc(p.Meta.Warnings, func(w string) bool { return strings.Contains(w, named) }) {
		t.Errorf("warnings %q: none says %q", p.Meta.Warnings, named)
	}
	arcs := threadArcs(p)
	workers := 0
	for _, th := range p.Threads {
		if th.Tid == held {
			t.Errorf("thread %d, held by another tracer, is in the profile", held)
		}
		if th.Tid == pid {
			continue
		}
		workers++
		n := map[string]int64{}
		for _, nd := range th.Nodes {
			if nd.Func != model.None {
				n[p.FuncName(nd.Func)] += nd.Calls
			}
		}
		for k, c := range arcs[th.Tid] {
			_, callee, _ := strings.Cut(k, ">")
			n[callee] += c
		}
		if want := int64(rounds * calls); n["step"] != want || n["leaf"] != want {
			t.Errorf("thread %d: step %d, leaf %d calls; want %d each", th.Tid, n["step"], n["leaf"], want)
		}
	}
	if workers != threads-1 {
		t.Errorf("%d workers in the profile, want %d", workers, threads-1)
	}
	s := r.Stats
	if s.Held != 1 || s.Rings.Unregistered == 0 || len(checks) < 3 || len(bad) > 0 {
		t.Errorf("%d held, %d calls of threads without a state, at the pauses %q; want 1, some (the held thread's), parked at 3 at least (attach, a move to counting, detach), every time",
			s.Held, s.Rings.Unregistered, checks)
	}
	t.Logf("held thread parked %d times; %d calls through our probes; functions moved to counting: %d", s.Parks, s.Rings.Unregistered, s.Probes.Moved)
	if err := proctext.MatchesDisk(pid); err != nil {
		t.Errorf("after the detach: %v", err)
	}
	if tp := procfs.TracerOf(held); tp != holder.Process.Pid {
		t.Errorf("after the detach thread %d is traced by %d, want %d", held, tp, holder.Process.Pid)
	}
	w.finish(t)
}

// A profiler killed while a held thread is parked: at the set-up's park
// (nothing patched yet), and at a pause while probes are in. The held
// thread leaves its park by itself once the tracer has been quiet past
// the deadline, the program's rounds go on right, and a later attach and
// detach leave the text the file's.
func TestHeldThreadOutlivesAKilledProfiler(t *testing.T) {
	for _, n := range []int{1, 2} {
		t.Run(fmt.Sprintf("pause%d", n), func(t *testing.T) {
			w := startHeldwork(t, 3, 200000)
			pid, held := w.cmd.Process.Pid, w.tids[2]
			holdWith(t, "", held)
			tracer := startTracer(t, pid, nil, "PROFILE_TEST_TRACE_PID="+strconv.Itoa(pid), "PROFILE_TEST_PROBES="+ProbesAuto,
				"PROFILE_TEST_SAMPLE=1", "PROFILE_TEST_DIE_PARKED="+strconv.Itoa(n))
			exited := make(chan struct{})
			go func() { tracer.Wait(); close(exited) }()
			// Rounds bring the moves to counting, and their pauses.
			for i := 0; ; i++ {
				select {
				case <-exited:
				case <-time.After(20 * time.Millisecond):
					if i < 500 {
						w.run(t)
						continue
					}
					t.Fatal("the tracer did not kill itself at a pause")
				}
				break
			}
			if st := tracer.ProcessState; st == nil || st.String() != "signal: killed" {
				t.Fatalf("the tracer ended: %v", st)
			}
			w.run(t) // the held thread's part comes once it leaves its park
			r := attachForOpt(t, pid, time.Second, Options{Filter: defaultOptions(t).Filter, Probes: ProbesAuto})
			if !slices.ContainsFunc(r.Profile.Meta.Warnings, func(s string) bool { return strings.Contains(s, fmt.Sprintf("thread %d (heldwork)", held)) }) {
				t.Errorf("the later attach does not name the held thread: %q", r.Profile.Meta.Warnings)
			}
			if err := proctext.MatchesDisk(pid); err != nil {
				t.Errorf("after the later detach: %v", err)
			}
			w.run(t)
			w.finish(t)
		})
	}
}

// A held thread whose tracer keeps our SIGURG from it cannot be held
// still: the attach is refused after a second, naming it, and leaves
// nothing: the text is the file's, no area of ours is mapped, the
// program's SIGURG disposition is its own, and it goes on right.
func TestHeldThreadThatCannotPark(t *testing.T) {
	w := startHeldwork(t, 3, 1000)
	pid, held := w.cmd.Process.Pid, w.tids[2]
	holdWith(t, "", held, "PROFILE_TEST_SWALLOW_URG=1")
	opt := defaultOptions(t)
	opt.Probes = ProbesAuto
	_, err := Attach(context.Background(), pid, opt)
	want := fmt.Sprintf("thread %d (heldwork), traced by pid", held)
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "did not stop") {
		t.Fatalf("attach: %v; want an error that says %q did not stop", err, want)
	}
	if err := proctext.MatchesDisk(pid); err != nil {
		t.Errorf("after the refused attach: %v", err)
	}
	if procfs.Mask(procfs.Status(pid), "SigCgt")&(1<<(unix.SIGURG-1)) != 0 {
		t.Error("after the refused attach a SIGURG handler is installed")
	}
	w.run(t)
	w.finish(t)
}

// A thread a held thread makes has no tracer that follows it (strace -p
// without -f): it is held too, named as made by a thread profile does not
// trace, and parked at the pauses after it appeared, the detach's among
// them, while it runs calls through our probes.
func TestThreadMadeByAHeldThread(t *testing.T) {
	w := startHeldwork(t, 3, 200000)
	pid, held := w.cmd.Process.Pid, w.tids[2]
	holdWith(t, "", held)
	opt := defaultOptions(t)
	opt.Probes, opt.SamplePeriod = ProbesAuto, 250*time.Microsecond
	var spinner atomic.Int64
	var checks []string
	opt.paused = func() {
		if s := int(spinner.Load()); s != 0 {
			checks = append(checks, parkedAt(pid, s))
		}
	}
	stop := attachRunning(t, pid, opt)
	w.run(t)
	io.WriteString(w.in, "spawn\n")
	line := w.line(t)
	s, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "spawned")))
	if err != nil {
		t.Fatalf("spawn: %q", line)
	}
	spinner.Store(int64(s))
	w.run(t)
	r, err := stop()
	if err != nil {
		t.Fatalf("attach: %v", err)
	}
	named := fmt.Sprintf("thread %d (heldwork), which no tracer has", s)
	if !slices.ContainsFunc(r.Profile.Meta.Warnings, func(w string) bool { return strings.Contains(w, named) }) {
		t.Errorf("warnings %q: none says %q", r.Profile.Meta.Warnings, named)
	}
	if len(checks) == 0 || slices.ContainsFunc(checks, func(c string) bool { return !strings.HasPrefix(c, "parked") }) {
		t.Errorf("the spinner at the pauses after it appeared: %q; want parked, at the detach's at least", checks)
	}
	if err := proctext.MatchesDisk(pid); err != nil {
		t.Errorf("after the detach: %v", err)
	}
	w.finish(t)
}
