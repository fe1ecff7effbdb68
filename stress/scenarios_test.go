//go:build stress

package stress

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/profile-dev/profile/internal/loadgen"
	"github.com/profile-dev/profile/internal/proctext"
	"github.com/profile-dev/profile/internal/workload"
	"github.com/profile-dev/profile/model"
)

// (a) 100 attach/detach cycles with inline probes on the server under
// load: after each, its text equals its files and no frame of any thread
// returns into the probes' code (the profiler's --stats says).
func TestAttachCycles(t *testing.T) {
	const cycles = 100
	sc := begin(t, "attach-cycles")
	srv := startServer(t)
	pid := srv.pid()
	if err := proctext.MatchesDisk(pid); err != nil {
		t.Fatalf("before tracing: %v", err)
	}
	ld := startLoad(t, srv.addr, 8, seed(t))
	dir := t.TempDir()
	var took []time.Duration
	var calls, emptyProfiles int64
	for i := 0; i < cycles; i++ {
		out := filepath.Join(dir, fmt.Sprintf("cycle%03d.data", i))
		t0 := time.Now()
		code, prof := runProfile(t, dir, 60*time.Second, "attach", "--probes", "inline", "--stats", "--pid", strconv.Itoa(pid), "--duration", "100ms", "-o", out)
		took = append(took, time.Since(t0))
		if code != 0 {
			t.Fatalf("cycle %d: profile attach: exit status %d, stderr %q (server %s)", i, code, prof.stderr.String(), srv.status())
		}
		p := readProfile(t, out)
		calls += p.Meta.TracedCalls
		if p.Meta.TracedCalls == 0 {
			emptyProfiles++
		}
		if srv.exited() {
			t.Fatalf("cycle %d: server %s, stderr %q", i, srv.status(), srv.stderr.String())
		}
		if err := proctext.MatchesDisk(pid); err != nil {
			t.Fatalf("after cycle %d: %v (profile said %q)", i, err, prof.stderr.String())
		}
		if !strings.Contains(prof.stderr.String(), "frames left in code: 0 ") {
			t.Fatalf("after cycle %d: frames may return into the probes' code: %q", i, prof.stderr.String())
		}
	}
	slices.Sort(took)
	t.Logf("%d cycles: attach+trace+detach took min %v, median %v, max %v; %d traced calls in all, %d profiles without calls",
		cycles, took[0].Round(time.Millisecond), took[len(took)/2].Round(time.Millisecond),
		took[len(took)-1].Round(time.Millisecond), calls, emptyProfiles)
	res := ld.stop(t)
	checkLoad(t, "load", res)
	rep := srv.quit(t)
	checkServed(t, rep, res)
	sc.done("%d cycles, %d requests, %d wrong, %d failed", cycles, res.Requests, res.Wrong, res.Failed)
}

// (b) profile record of 32 threads calling traced functions: exact counts.
func TestThreads32(t *testing.T) {
	sc := begin(t, "threads32")
	bin, err := workload.Path("many")
	if err != nil {
		t.Fatal(err)
	}
	want, err := workload.LoadExpected("many")
	if err != nil {
		t.Fatal(err)
	}
	ref := exec.Command(bin)
	refOut, err := ref.Output()
	if err != nil {
		t.Fatalf("untraced many: %v", err)
	}

	dir := t.TempDir()
	selfPath := filepath.Join(dir, "selfcheck.json")
	code, prof := runProfile(t, dir, 120*time.Second, "record", "-o", "many.data", "--", bin, "--selfcheck="+selfPath)
	if code != 0 {
		t.Fatalf("profile record: exit status %d, stderr %q", code, prof.stderr.String())
	}
	if got := prof.stdout.String(); got != string(refOut) {
		t.Errorf("stdout %q, untraced %q", got, refOut)
	}
	p := readProfile(t, filepath.Join(dir, "many.data"))
	got := programCalls(p)
	if !reflect.DeepEqual(got, want.Functions) {
		t.Errorf("profile counts:\n got  %v\n want %v", got, want.Functions)
	}
	data, err := os.ReadFile(selfPath)
	if err != nil {
		t.Fatal(err)
	}
	var self workload.Expected
	if err := json.Unmarshal(data, &self); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, self.Functions) {
		t.Errorf("profile counts:\n got  %v\n self-counted %v", got, self.Functions)
	}
	spawned := 0
	for _, th := range p.Threads {
		if th.Level == 1 && th.SpawnedBy != model.None && p.Functions[th.SpawnedBy].Name == "spawn_threads" {
			spawned++
		}
	}
	if len(p.Threads) != 33 || spawned != 32 {
		t.Errorf("%d threads, %d spawned by spawn_threads at level 1; want 33 and 32", len(p.Threads), spawned)
	}
	var total uint64
	for _, c := range got {
		total += c.Calls
	}
	sc.done("%d threads, %d calls, counts exact: %v", len(p.Threads), total, !t.Failed())
}

// (c) SIGSTOP/SIGCONT of the traced server under load.
func TestStopCont(t *testing.T) {
	sc := begin(t, "stopcont")
	srv := startServer(t)
	pid := srv.pid()
	ld := startLoad(t, srv.addr, 8, seed(t)+1)
	dir := t.TempDir()
	prof := startProfile(t, dir, "attach", "--pid", strconv.Itoa(pid), "-o", "stopcont.data")
	t.Logf("breakpoints in after %v", waitInstrumented(t, pid, prof).Round(time.Millisecond))
	time.Sleep(300 * time.Millisecond)

	// Under load the tracer has a backlog of breakpoint stops: the group
	// stop may take a moment to settle. Then the server must stay still.
	syscall.Kill(pid, syscall.SIGSTOP)
	t0 := time.Now()
	settle := time.Duration(-1)
	for prev := cpuTicks(pid); time.Since(t0) < 3*time.Second; {
		time.Sleep(100 * time.Millisecond)
		cur := cpuTicks(pid)
		if cur == prev {
			settle = time.Since(t0) - 100*time.Millisecond
			break
		}
		prev = cur
	}
	state := procState(pid)
	c0 := cpuTicks(pid)
	time.Sleep(300 * time.Millisecond)
	c1 := cpuTicks(pid)
	syscall.Kill(pid, syscall.SIGCONT)
	t.Logf("SIGSTOP: still after %v, state %q; stopped 300 ms more: cpu ticks %d -> %d", settle.Round(time.Millisecond), state, c0, c1)
	if settle < 0 {
		t.Errorf("the server kept running for 3 s after SIGSTOP")
	} else if c1 != c0 {
		t.Errorf("the stopped server ran: cpu ticks %d -> %d", c0, c1)
	}
	time.Sleep(500 * time.Millisecond) // traced again after the stop

	prof.cmd.Process.Signal(syscall.SIGINT)
	if code := prof.finish(t, 30*time.Second); code != 0 {
		t.Fatalf("profile attach after SIGINT: exit status %d, stderr %q", code, prof.stderr.String())
	}
	p := readProfile(t, filepath.Join(dir, "stopcont.data"))
	if srv.exited() {
		t.Fatalf("server %s", srv.status())
	}
	if err := proctext.MatchesDisk(pid); err != nil {
		t.Errorf("after detach: %v", err)
	}
	res := ld.stop(t)
	checkLoad(t, "load", res)
	if res.MaxLatency < 250*time.Millisecond {
		t.Errorf("max latency %v: the stop did not hold the requests", res.MaxLatency)
	}
	rep := srv.quit(t)
	if res.Failed == 0 {
		checkServed(t, rep, res)
	}
	sc.done("%d requests, %d wrong, %d failed, max latency %v, %d traced calls",
		res.Requests, res.Wrong, res.Failed, res.MaxLatency.Round(time.Millisecond), p.Meta.TracedCalls)
}

// (d) The traced server is SIGKILLed: the profiler exits promptly and
// writes the partial profile.
func TestTargetKilled(t *testing.T) {
	sc := begin(t, "target-killed")
	srv := startServer(t)
	pid := srv.pid()
	ld := startLoad(t, srv.addr, 8, seed(t)+2)
	dir := t.TempDir()
	prof := startProfile(t, dir, "attach", "--pid", strconv.Itoa(pid), "-o", "killed.data")
	waitInstrumented(t, pid, prof)
	time.Sleep(700 * time.Millisecond)
	syscall.Kill(pid, syscall.SIGKILL)
	t0 := time.Now()
	if !prof.wait(10 * time.Second) {
		t.Fatalf("profile attach still running 10 s after the target was killed (stderr %q)", prof.stderr.String())
	}
	exitAfter := time.Since(t0)
	if code := prof.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("profile attach: exit status %d (%s), stderr %q", code, prof.status(), prof.stderr.String())
	}
	p := readProfile(t, filepath.Join(dir, "killed.data"))
	if !p.Meta.Partial {
		t.Errorf("profile not marked partial: %+v", p.Meta)
	}
	if !srv.wait(5*time.Second) || srv.signaled() != syscall.SIGKILL {
		t.Errorf("server: %s, want killed by SIGKILL", srv.status())
	}
	res := ld.stop(t)
	t.Logf("load (failures expected once the server is gone): %v", res)
	sc.done("profiler exited %v after the kill, profile partial (%q), %d traced calls",
		exitAfter.Round(time.Millisecond), p.Meta.PartialReason, p.Meta.TracedCalls)
}

// (e) profile record of a crashing program: the crash goes through.
func TestTargetCrash(t *testing.T) {
	sc := begin(t, "target-crash")
	bin, err := workload.Path("crash")
	if err != nil {
		t.Fatal(err)
	}
	ref := exec.Command(bin)
	refOut, _ := ref.Output()
	ws := ref.ProcessState.Sys().(syscall.WaitStatus)
	if !ws.Signaled() {
		t.Fatalf("untraced crash: %v, want death by a signal", ref.ProcessState)
	}
	dir := t.TempDir()
	code, prof := runProfile(t, dir, 60*time.Second, "record", "-o", "crash.data", "--", bin)
	if want := 128 + int(ws.Signal()); code != want {
		t.Errorf("profile record: exit status %d, want %d (128+%v) (stderr %q)", code, want, ws.Signal(), prof.stderr.String())
	}
	if got := prof.stdout.String(); got != string(refOut) {
		t.Errorf("stdout %q, untraced %q", got, refOut)
	}
	p := readProfile(t, filepath.Join(dir, "crash.data"))
	c := p.Meta.Crash
	if !p.Meta.Partial || c == nil || c.Signal != "SIGSEGV" {
		t.Fatalf("meta %+v, crash %+v: want a partial profile with the SIGSEGV", p.Meta, c)
	}
	want, err := workload.LoadExpected("crash")
	if err != nil {
		t.Fatal(err)
	}
	if got := programCalls(p); !reflect.DeepEqual(got, want.Functions) {
		t.Errorf("counts %v, want %v", got, want.Functions)
	}
	sc.done("exit status %d (128+%d, %v), crash stack %q", code, int(ws.Signal()), ws.Signal(), strings.Join(c.Stack, " | "))
}

// (f) SIGTERM, then SIGINT, to the profiler attached to the loaded server.
func TestProfilerSignals(t *testing.T) {
	sc := begin(t, "profiler-signals")
	srv := startServer(t)
	pid := srv.pid()
	ld := startLoad(t, srv.addr, 8, seed(t)+3)
	dir := t.TempDir()
	var probes loadgen.Result
	var figures []string
	for i, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		out := fmt.Sprintf("sig%d.data", i)
		prof := startProfile(t, dir, "attach", "--pid", strconv.Itoa(pid), "-o", out)
		waitInstrumented(t, pid, prof)
		time.Sleep(time.Second)
		prof.cmd.Process.Signal(sig)
		t0 := time.Now()
		if code := prof.finish(t, 30*time.Second); code != 0 {
			t.Fatalf("%v: profile attach: exit status %d (%s), stderr %q", sig, code, prof.status(), prof.stderr.String())
		}
		detach := time.Since(t0)
		p := readProfile(t, filepath.Join(dir, out))
		if !p.Meta.Detached || p.Meta.Partial || p.Meta.TracedCalls == 0 {
			t.Errorf("%v: profile meta %+v: want a complete profile of a detach, with calls", sig, p.Meta)
		}
		if srv.exited() {
			t.Fatalf("%v: server %s, stderr %q", sig, srv.status(), srv.stderr.String())
		}
		if err := proctext.MatchesDisk(pid); err != nil {
			t.Errorf("after %v: %v", sig, err)
		}
		probes.Add(probe(t, srv.addr, 200, uint64(100+i)))
		figures = append(figures, fmt.Sprintf("%v: exit 0 after %v, %d calls", sig, detach.Round(time.Millisecond), p.Meta.TracedCalls))
		t.Log(figures[len(figures)-1])
	}
	res := ld.stop(t)
	checkLoad(t, "load", res)
	rep := srv.quit(t)
	total := res
	total.Add(probes)
	checkServed(t, rep, total)
	sc.done("%s; %d requests, %d wrong, %d failed", strings.Join(figures, "; "), total.Requests, total.Wrong, total.Failed)
}
