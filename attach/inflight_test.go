package attach

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/profile-dev/profile/attach/internal/procfs"
	"github.com/profile-dev/profile/instrument"
	"github.com/profile-dev/profile/instrument/unwind"
	"github.com/profile-dev/profile/internal/workload"
	"github.com/profile-dev/profile/model"
)

// nodeUnder finds the node of fn whose parent is parent (display names).
func nodeUnder(p *model.Profile, parent, fn string) (model.Node, bool) {
	for _, t := range p.Threads {
		for _, n := range t.Nodes[1:] {
			if p.FuncName(n.Func) == fn && p.FuncName(t.Nodes[n.Parent].Func) == parent {
				return n, true
			}
		}
	}
	return model.Node{}, false
}

func TestAttachRebuildsInFlightFrames(t *testing.T) {
	forEachProbe(t, func(t *testing.T, _ Options) {
		target, _ := startLongrun(t, "--threads", "2", "--seconds", "6")
		started := time.Now()
		time.Sleep(400 * time.Millisecond)
		// The sleeper thread sleeps until about 2 s after the start.
		remaining := 2*time.Second - time.Since(started)
		r := attachFor(t, target.Process.Pid, 2500*time.Millisecond)
		p := r.Profile
		sl, ok := nodeUnder(p, "sleeper_thread", "sleeper")
		if !ok || sl.InFlight != 1 {
			t.Fatalf("sleeper under sleeper_thread = %+v (found %v), want one in-flight activation", sl, ok)
		}
		// The in-flight sleep alone lasted the remaining time (timed from when
		// attaching finished: allow for the attach itself on a loaded machine);
		// a later sleep adds more. Without the in-flight frame it would be 0.
		if slack := 400 * time.Millisecond; time.Duration(sl.TotalNs) < remaining-slack {
			t.Fatalf("sleeper total %v, the sleep had %v left at attach", time.Duration(sl.TotalNs), remaining)
		}
		if st, ok := nodeUnder(p, "START", "sleeper_thread"); !ok || st.InFlight != 1 || st.Calls != 0 {
			t.Fatalf("sleeper_thread = %+v, want in flight, no call", st)
		}
		cn, ok := nodeUnder(p, "sleeper", "libc.so.6:clock_nanosleep")
		if !ok || cn.InFlight != 1 {
			t.Fatalf("clock_nanosleep under sleeper = %+v (found %v), want in flight", cn, ok)
		}
		ct, ok := nodeUnder(p, "START", "compute_thread")
		if !ok || ct.InFlight != 1 || ct.Calls != 0 {
			t.Fatalf("compute_thread = %+v, want the computing thread's in-flight frame", ct)
		}
		// main waits in pthread_join, which tail-jumped into the C
		// library's join: no frame of it is on the stack, the call before
		// the return address into spawn_all names it. Its wait is its own,
		// not spawn_all's self time.
		pj, ok := nodeUnder(p, "spawn_all", "libc.so.6:pthread_join")
		if !ok || pj.InFlight != 1 {
			t.Fatalf("pthread_join under spawn_all = %+v (found %v), want in flight", pj, ok)
		}
		if sa, _ := nodeUnder(p, "main", "spawn_all"); sa.SelfNs > sa.TotalNs/10 {
			t.Errorf("spawn_all: self %v of total %v: the join's wait is in it", time.Duration(sa.SelfNs), time.Duration(sa.TotalNs))
		}
		if err := target.Wait(); err != nil {
			t.Fatalf("target: %v", err)
		}
	})
}

// Unwinding at attach follows the whole stack, however deep: every level
// of a 2,000-deep recursion, and main beneath it.
func TestAttachUnwindsDeepStacks(t *testing.T) {
	forEachProbe(t, func(t *testing.T, _ Options) {
		bin := filepath.Join(t.TempDir(), "deep")
		if out, err := exec.Command("gcc", "-O2", "-fno-optimize-sibling-calls", "-o", bin, "testdata/deep.c").CombinedOutput(); err != nil {
			t.Fatalf("gcc: %v\n%s", err, out)
		}
		cmd := exec.Command(bin)
		stdout, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		if line, _ := bufio.NewReader(stdout).ReadString('\n'); line != "ready\n" {
			t.Fatalf("deep printed %q", line)
		}
		r := attachFor(t, cmd.Process.Pid, 300*time.Millisecond)
		p := r.Profile
		depth, top := 0, ""
		for _, n := range p.Threads[0].Nodes[1:] {
			name := p.FuncName(n.Func)
			if name == "descend" && n.InFlight == 1 {
				depth++
			}
			if p.FuncName(p.Threads[0].Nodes[n.Parent].Func) == "START" {
				top = name
			}
		}
		if depth != 2000 || top != "main" {
			t.Fatalf("in flight at attach: %d levels of descend under %q, want 2000 under main", depth, top)
		}
	})
}

// A long-running probed function already on the stack at attach, under
// either probe kind: outer and long_running are in flight (timed, not
// counted), every step made after the attach is counted exactly, and the
// in-flight frames close when they return (after runs once, under main).
func TestLongRunningFunctionAtAttach(t *testing.T) {
	forEachProbe(t, func(t *testing.T, opt Options) {
		bin, err := workload.Path("inflight")
		if err != nil {
			t.Fatal(err)
		}
		cmd, stdin, lines := startReady(t, bin, "--wait-mark")
		type res struct {
			r   *Result
			err error
		}
		done := make(chan res, 1)
		go func() {
			r, err := Attach(context.Background(), cmd.Process.Pid, opt)
			done <- res{r, err}
		}()
		for procfs.TracerOf(cmd.Process.Pid) == 0 {
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(300 * time.Millisecond) // attached and probed
		fmt.Fprintln(stdin, "mark")
		time.Sleep(300 * time.Millisecond)
		fmt.Fprintln(stdin, "quit")
		var out []string
		for lines.Scan() {
			out = append(out, lines.Text())
		}
		d := <-done
		if d.err != nil {
			t.Fatal(d.err)
		}
		cmd.Wait()
		var after int
		for _, l := range out {
			fmt.Sscanf(l, "steps_after_mark=%d", &after)
		}
		p := d.r.Profile
		if after == 0 {
			t.Fatalf("the workload made no step after the mark: %q", out)
		}
		for _, c := range []struct {
			parent, fn      string
			calls, inFlight int64
		}{
			{"START", "main", 0, 1}, {"main", "outer", 0, 1}, {"outer", "long_running", 0, 1},
			{"long_running", "step", int64(after), 0}, {"main", "after", 1, 0},
		} {
			n, ok := nodeUnder(p, c.parent, c.fn)
			if !ok || n.Calls != c.calls || n.InFlight != c.inFlight {
				t.Errorf("%s under %s = %+v (found %v), want %d calls, %d in flight", c.fn, c.parent, n, ok, c.calls, c.inFlight)
			}
		}
	})
}

// startReady starts bin with args, its stdin and stdout piped, and waits
// for its first line, "ready" (killed at the test's end).
func startReady(t *testing.T, bin string, args ...string) (*exec.Cmd, io.Writer, *bufio.Scanner) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() || lines.Text() != "ready" {
		t.Fatalf("first line %q, want ready", lines.Text())
	}
	return cmd, stdin, lines
}

// The unwinder's modules include the process's [vdso], copied out of its
// memory: a sample in clock_gettime's system call unwinds by it to its
// caller. Loaded for attach (preopen) and for a process traced from its
// start alike: both go through loadUnwind.
func TestUnwindModulesHoldTheVDSO(t *testing.T) {
	maps, err := instrument.ReadMaps(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(maps, func(m instrument.Mapping) bool { return m.Path == "[vdso]" }) {
		t.Skip("no [vdso] mapping")
	}
	var vdso *unwind.Module
	for _, m := range (&engine{}).loadUnwind(os.Getpid(), maps, nil) {
		if m.Path == "[vdso]" {
			vdso = m
		}
	}
	if vdso == nil {
		t.Fatal("no [vdso] among the unwinder's modules")
	}
	for _, m := range maps {
		if m.Path == "[vdso]" && (!vdso.Contains(m.Start) || vdso.Contains(m.End)) {
			t.Errorf("[vdso] mapped at %#x-%#x, the module covers otherwise", m.Start, m.End)
		}
	}
}
