package attach

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/profile-dev/profile/internal/proctext"
	"github.com/profile-dev/profile/internal/workload"
)

// sites' loop_entry loops back into its first 5 bytes and tiny is 3 bytes
// with code behind them: neither can take the jump at its entry, but every
// branch to them is direct (a call, and via_tail's jmp rel32). Under
// --probes auto both are probed at those branches: inline, exact counts,
// no stop per call; a detach puts every byte back (the test helpers check
// the text against the file).
func TestProbedAtCallSites(t *testing.T) {
	opt := defaultOptions(t)
	opt.Probes = ProbesAuto
	r, out := recordWorkload(t, "sites", opt)
	checkExpected(t, "sites", r)
	if wantOut, _ := untraced(t, "sites"); out != wantOut {
		t.Errorf("stdout %q, untraced %q", out, wantOut)
	}
	exeAllInline(t, r.Profile, 5)
	// after_tiny too, when the linker puts code right behind it.
	if r.Stats.Probes.Sites < 2 {
		t.Errorf("%d functions probed at their call sites, want loop_entry and tiny at least", r.Stats.Probes.Sites)
	}
	if r.Stats.Stops > 50 {
		t.Errorf("%d stops for 320,001 calls: want a few for set-up", r.Stats.Stops)
	}
}

// The same under each probe kind (trap: breakpoints at the entries).
func TestProbedAtCallSitesExact(t *testing.T) {
	forEachProbe(t, func(t *testing.T, opt Options) {
		want, err := workload.SelfCheck("sites", "3000")
		if err != nil {
			t.Fatal(err)
		}
		r, out := recordWorkload(t, "sites", opt, "3000")
		compareExpected(t, want, r.Profile)
		if wantOut, _ := untraced(t, "sites", "3000"); out != wantOut {
			t.Errorf("stdout %q, untraced %q", out, wantOut)
		}
	})
}

// startSites runs the sites workload for about seconds.
func startSites(t *testing.T, seconds string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	return startWorkload(t, "sites", "1000000000", seconds)
}

// Attached to a running sites, the call-site probes count from then on
// (each iteration calls tiny and after_tiny once, loop_entry once more
// every tenth), and the detach gives every byte back. A profiler killed
// while attached leaves its call sites re-aimed at its trampolines; the
// next attach puts them back, and its own detach leaves the text equal to
// the file's and no area of a profiler mapped.
func TestCallSitesAttachAndKilled(t *testing.T) {
	target, out := startSites(t, "120")
	pid := target.Process.Pid
	before := profilerAreas(t, pid, nil)
	time.Sleep(200 * time.Millisecond)
	opt := defaultOptions(t)
	opt.Probes = ProbesAuto
	r := attachForOpt(t, pid, 500*time.Millisecond, opt)
	c := nodeCalls(r.Profile)
	if r.Stats.Probes.Sites < 2 || c["tiny"] == 0 || abs(c["tiny"]-c["after_tiny"]) > 1 || abs(c["loop_entry"]-c["tiny"]-c["via_tail"]) > 2 {
		t.Errorf("attached: %d functions at their call sites, calls %v", r.Stats.Probes.Sites, c)
	}
	if err := proctext.FileBytes(pid); err != nil {
		t.Fatalf("after the detach: %v", err)
	}
	killTracers(t, pid, ProbesInline, 2, 500*time.Millisecond)
	alive(t, target, out)
	r = attachForOpt(t, pid, 500*time.Millisecond, opt)
	if c := nodeCalls(r.Profile); r.Stats.Leftover.Patches == 0 || r.Stats.Probes.Sites < 2 || c["tiny"] == 0 || abs(c["tiny"]-c["after_tiny"]) > 1 {
		t.Errorf("after the kills: %d leftover patches undone, %d functions at their call sites, calls %v",
			r.Stats.Leftover.Patches, r.Stats.Probes.Sites, c)
	}
	endsClean(t, target, out, before, "sites: result=")
}

// endsClean checks target after a clean detach: its text equals its
// files', no area a profiler mapped is left (before: those mapped
// before any), and, told to stop by SIGUSR1, it ends well, its output
// starting with prefix. Its own time limit only bounds a hung test: a
// loaded machine can take most of it for four attaches.
func endsClean(t *testing.T, target *exec.Cmd, out *bytes.Buffer, before []string, prefix string) {
	t.Helper()
	pid := target.Process.Pid
	if err := proctext.FileBytes(pid); err != nil {
		t.Errorf("after the clean detach: %v", err)
	}
	if left := profilerAreas(t, pid, before); len(left) > 0 {
		t.Errorf("after the clean detach the profilers' areas are still mapped: %v", left)
	}
	if err := target.Process.Signal(syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	if err := target.Wait(); err != nil {
		t.Fatalf("target: %v (output %q)", err, out.String())
	}
	if !strings.HasPrefix(out.String(), prefix) {
		t.Errorf("target said %q", out.String())
	}
}

// alive stops the test if target has ended, saying how: after its
// profilers' deaths it must run on as if untraced.
func alive(t *testing.T, target *exec.Cmd, out *bytes.Buffer) {
	t.Helper()
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", target.Process.Pid))
	if i := bytes.LastIndexByte(stat, ')'); err == nil && i > 0 && i+2 < len(stat) && stat[i+2] != 'Z' {
		return
	}
	err = target.Wait()
	t.Fatalf("the target ended: %v (state %v, output %q)", err, target.ProcessState, out.String())
}

func abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// holdentry's thread spins inside hold's first bytes (its loop branches
// back into them) while the profiler attaches: hold takes its probe at its
// call site, leaving those bytes alone; the spinning activation counts as
// in flight, and the 1,000 calls after it exactly.
func TestAttachWhileInsideFirstBytes(t *testing.T) {
	bin, err := workload.Path("holdentry")
	if err != nil {
		t.Fatal(err)
	}
	outPath := filepath.Join(t.TempDir(), "out")
	outFile, err := os.Create(outPath)
	if err != nil {
		t.Fatal(err)
	}
	defer outFile.Close()
	cmd := exec.Command(bin, "3000") // the attach is done well before
	cmd.Stdout = outFile             // a file: the tracer reaps the target, not cmd.Wait
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	time.Sleep(300 * time.Millisecond)
	opt := defaultOptions(t)
	opt.Probes = ProbesAuto
	r := attachForOpt(t, cmd.Process.Pid, 20*time.Second, opt) // ends with the program
	if out, _ := os.ReadFile(outPath); r.ExitCode != 0 || string(out) != "holdentry: held\n" {
		t.Fatalf("target: exit %d, said %q", r.ExitCode, out)
	}
	p := r.Profile
	var calls, inFlight int64
	for _, th := range p.Threads {
		for _, n := range th.Nodes {
			if p.FuncName(n.Func) == "hold" {
				calls += n.Calls
				inFlight += n.InFlight
			}
		}
	}
	if calls != 1000 || inFlight != 1 || r.Stats.Probes.Sites < 1 {
		t.Errorf("hold: %d calls, %d in flight, %d functions at their call sites; want 1000, 1, hold's", calls, inFlight, r.Stats.Probes.Sites)
	}
	exeAllInline(t, p, 3)
}
