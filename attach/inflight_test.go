package attach

import (
	"bufio"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

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
	if err := target.Wait(); err != nil {
		t.Fatalf("target: %v", err)
	}
}

// Unwinding at attach follows the whole stack, however deep: every level
// of a 2,000-deep recursion, and main beneath it.
func TestAttachUnwindsDeepStacks(t *testing.T) {
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
}
