//go:build stress

package stress

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/profile-dev/profile/internal/loadgen"
	"github.com/profile-dev/profile/internal/proctext"
	"github.com/profile-dev/profile/internal/workload"
	"github.com/profile-dev/profile/model"
)

// profileBin is the profile binary built for this run; faultBin the same
// built with fault injection (attach/internal/ptrace/faults_on.go).
var profileBin, faultBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "profile-stress-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	profileBin = filepath.Join(dir, "profile")
	faultBin = filepath.Join(dir, "profile-faultinject")
	// A plan cache of the run's own (cmd/e2e_test.go says why).
	os.Setenv("PROFILE_PLAN_CACHE", filepath.Join(dir, "plans"))
	for _, b := range [][]string{{"-o", profileBin}, {"-tags", "faultinject", "-o", faultBin}} {
		build := exec.Command("go", append(append([]string{"build"}, b...), "github.com/profile-dev/profile")...)
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "stress: building profile:", err)
			os.RemoveAll(dir)
			os.Exit(1)
		}
	}
	if err := workload.Build(); err != nil {
		fmt.Fprintln(os.Stderr, "stress:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// scenario times one scenario and prints its summary line.
type scenario struct {
	t     *testing.T
	name  string
	start time.Time
}

func begin(t *testing.T, name string) *scenario {
	return &scenario{t: t, name: name, start: time.Now()}
}

func (s *scenario) elapsed() time.Duration { return time.Since(s.start) }

// done logs "stress: NAME: <figures>, <seconds> s".
func (s *scenario) done(format string, args ...any) {
	s.t.Helper()
	s.t.Logf("stress: %s: %s, %.1f s", s.name, fmt.Sprintf(format, args...), s.elapsed().Seconds())
}

// lockedBuffer is a bytes.Buffer safe for a writer goroutine and readers.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// proc is a child process whose end is observed by a goroutine.
type proc struct {
	cmd    *exec.Cmd
	stdout lockedBuffer
	stderr lockedBuffer
	done   chan struct{} // closed when the process has exited and its output is read
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

// exited tells whether the process has ended.
func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// wait waits up to d for the process to end; false on timeout.
func (p *proc) wait(d time.Duration) bool {
	select {
	case <-p.done:
		return true
	case <-time.After(d):
		return false
	}
}

// status describes how the process ended ("running" if it has not).
func (p *proc) status() string {
	if !p.exited() {
		return "running"
	}
	return p.cmd.ProcessState.String()
}

// signaled returns the signal that killed the process, 0 if none (or if
// it still runs).
func (p *proc) signaled() syscall.Signal {
	if !p.exited() {
		return 0
	}
	if ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return ws.Signal()
	}
	return 0
}

// kill kills the process and waits for it.
func (p *proc) kill() {
	p.cmd.Process.Kill()
	<-p.done
}

// start starts cmd with its output captured; the process is killed when
// the test ends. deathSig, if not 0, is sent to it should this test
// process die (a test timeout), so that nothing is left running.
func start(t *testing.T, cmd *exec.Cmd, deathSig syscall.Signal) *proc {
	t.Helper()
	p := &proc{cmd: cmd, done: make(chan struct{})}
	cmd.Stdout = &p.stdout
	cmd.Stderr = &p.stderr
	if deathSig != 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: deathSig}
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(p.kill)
	return p
}

// server is testdata/bin/server.
type server struct {
	*proc
	addr string
}

// startServer starts the server workload and waits for its port. The
// safety net --seconds 300 outlasts every scenario.
func startServer(t *testing.T, args ...string) *server {
	t.Helper()
	bin, err := workload.Path("server")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, append([]string{"--seconds", "300"}, args...)...)
	rd, wr, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, done: make(chan struct{})}
	cmd.Stdout = wr
	cmd.Stderr = &p.stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	wr.Close()
	port := make(chan string, 1)
	go func() {
		br := bufio.NewReader(rd)
		first, _ := br.ReadString('\n')
		p.stdout.Write([]byte(first))
		port <- strings.TrimSpace(strings.TrimPrefix(first, "port="))
		io.Copy(&p.stdout, br)
		rd.Close()
		cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(p.kill)
	select {
	case port := <-port:
		if _, err := strconv.Atoi(port); err != nil {
			p.wait(5 * time.Second)
			t.Fatalf("server printed no port: %s, stderr %q", p.status(), p.stderr.String())
		}
		return &server{proc: p, addr: "127.0.0.1:" + port}
	case <-time.After(10 * time.Second):
		t.Fatal("server: no port after 10 s")
		return nil
	}
}

// quit stops the server with a "quit" request and checks that it exits
// with status 0 and a report.
func (s *server) quit(t *testing.T) *loadgen.Report {
	t.Helper()
	if err := loadgen.Quit(s.addr, 5*time.Second); err != nil {
		t.Fatalf("%v (server %s, stderr %q)", err, s.status(), s.stderr.String())
	}
	return s.report(t)
}

// report waits for the server's exit (status 0) and parses its output.
func (s *server) report(t *testing.T) *loadgen.Report {
	t.Helper()
	if !s.wait(10 * time.Second) {
		t.Fatal("server still running 10 s after quit")
	}
	if code := s.cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("server: %s, want exit status 0 (stderr %q)", s.status(), s.stderr.String())
	}
	rep, err := loadgen.ParseReport(s.stdout.String())
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// checkServed checks the server's report against everything the clients
// got: the same number of requests, and the call counts those requests
// imply. Only meaningful when no request failed (a timed-out request may
// still have been answered).
func checkServed(t *testing.T, rep *loadgen.Report, total loadgen.Result) {
	t.Helper()
	if rep.Requests != total.OK+total.Wrong {
		t.Errorf("server answered %d requests, clients got %d replies", rep.Requests, total.OK+total.Wrong)
	}
	if err := rep.CheckCalls(total.Calls); err != nil {
		t.Error(err)
	}
}

// load is a loadgen.Run going on in the background.
type load struct {
	cancel context.CancelFunc
	done   chan struct{}
	res    loadgen.Result
	err    error
}

// startLoad keeps conns connections busy with requests to addr until stop.
func startLoad(t *testing.T, addr string, conns int, seed uint64) *load {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	l := &load{cancel: cancel, done: make(chan struct{})}
	go func() {
		l.res, l.err = loadgen.Run(ctx, addr, conns, loadgen.Options{Seed: seed, Timeout: 5 * time.Second})
		close(l.done)
	}()
	t.Cleanup(func() { cancel(); <-l.done })
	return l
}

// stop ends the load and returns its result (requests in flight complete
// within their 5 s deadline).
func (l *load) stop(t *testing.T) loadgen.Result {
	t.Helper()
	l.cancel()
	select {
	case <-l.done:
	case <-time.After(20 * time.Second):
		t.Fatal("load generator did not stop within 20 s")
	}
	if l.err != nil {
		t.Fatal(l.err)
	}
	return l.res
}

// checkLoad requires every request to have been answered correctly.
func checkLoad(t *testing.T, what string, r loadgen.Result) {
	t.Helper()
	t.Logf("%s: %v", what, r)
	if r.Wrong != 0 || r.Failed != 0 || r.OK == 0 {
		t.Errorf("%s: %d wrong, %d failed, %d ok replies, want only ok ones:\n  %s",
			what, r.Wrong, r.Failed, r.OK, strings.Join(append(r.WrongReplies, r.Errors...), "\n  "))
	}
}

// probe sends n requests on 4 fresh connections: the server still answers,
// and correctly.
func probe(t *testing.T, addr string, n int64, seed uint64) loadgen.Result {
	t.Helper()
	r, err := loadgen.Run(context.Background(), addr, 4, loadgen.Options{Requests: n, Seed: seed})
	if err != nil {
		t.Fatalf("probe: %v", err)
	}
	if r.OK != n || r.Wrong != 0 || r.Failed != 0 {
		t.Errorf("probe: %v:\n  %s", r, strings.Join(append(r.WrongReplies, r.Errors...), "\n  "))
	}
	return r
}

// profiler is a running profile command.
type profiler struct{ *proc }

// startProfile runs the profile binary with args in dir. Should this test
// process die, the profiler gets SIGTERM (it then detaches cleanly).
func startProfile(t *testing.T, dir string, args ...string) profiler {
	t.Helper()
	cmd := exec.Command(profileBin, args...)
	cmd.Dir = dir
	p := profiler{start(t, cmd, syscall.SIGTERM)}
	// Runs before start's SIGKILL: a test that fails while tracing lets
	// the profiler detach rather than SIGKILL it (scenario g's business).
	t.Cleanup(func() {
		if !p.exited() {
			p.cmd.Process.Signal(syscall.SIGTERM)
			p.wait(10 * time.Second)
		}
	})
	return p
}

// finish waits up to d for the profiler and returns its exit status; the
// test fails if it does not end in time.
func (p profiler) finish(t *testing.T, d time.Duration) int {
	t.Helper()
	if !p.wait(d) {
		p.kill()
		t.Fatalf("profile %s: still running after %v (stderr %q)", strings.Join(p.cmd.Args[1:], " "), d, p.stderr.String())
	}
	return p.cmd.ProcessState.ExitCode()
}

// runProfile runs profile to completion (at most d) and returns its exit
// status.
func runProfile(t *testing.T, dir string, d time.Duration, args ...string) (int, profiler) {
	t.Helper()
	p := startProfile(t, dir, args...)
	return p.finish(t, d), p
}

// readProfile reads (and validates) a profile file.
func readProfile(t *testing.T, path string) *model.Profile {
	t.Helper()
	p, err := model.ReadFile(path)
	if err != nil {
		t.Fatalf("profile file: %v", err)
	}
	return p
}

// programCalls sums, over all threads, the calls and recursive calls of
// each function of the first process's executable, by name: timed calls
// in the trees and counted ones in the arcs (a short function moves to
// counting mid-run).
func programCalls(p *model.Profile) map[string]workload.Counts {
	out := map[string]workload.Counts{}
	if len(p.Processes) == 0 {
		return out
	}
	exe := p.Processes[0].Exe
	for _, th := range p.Threads {
		for _, n := range th.Nodes[1:] {
			fn := p.Functions[n.Func]
			if p.Modules[fn.Module].Path != exe {
				continue
			}
			c := out[fn.Name]
			c.Calls += uint64(n.Calls)
			c.RecursiveCalls += uint64(n.RecursiveCalls)
			out[fn.Name] = c
		}
		for _, a := range th.Arcs { // the calls of a function moved to counting
			fn := p.Functions[a.Callee]
			if p.Modules[fn.Module].Path != exe {
				continue
			}
			c := out[fn.Name]
			c.Calls += uint64(a.Calls)
			if a.Caller == a.Callee {
				// called from its own code: recursive for sure, as the
				// profile's graph counts it (fib moved to counting
				// mid-recursion has its inner calls here)
				c.RecursiveCalls += uint64(a.Calls)
			}
			out[fn.Name] = c
		}
	}
	return out
}

// tracerPid is the TracerPid of a process (0: not traced, -1: gone).
func tracerPid(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "TracerPid:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return -1
}

// waitInstrumented waits until the profiler has put breakpoints into the
// target: its text in memory differs from the file.
func waitInstrumented(t *testing.T, pid int, prof profiler) time.Duration {
	t.Helper()
	t0 := time.Now()
	for time.Since(t0) < 20*time.Second {
		if prof.exited() {
			t.Fatalf("profiler ended before instrumenting the target: %s, stderr %q", prof.status(), prof.stderr.String())
		}
		if err := proctext.FileText(pid); err != nil {
			return time.Since(t0)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the profiler inserted no breakpoint within 20 s")
	return 0
}

// cpuTicks is a process's utime+stime, -1 if gone.
func cpuTicks(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return -1
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	u, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return u + st
}

// procState is the state letter of /proc/PID/stat ("R", "S", "T", "t", ...).
func procState(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "gone"
	}
	s := string(b)
	return strings.Fields(s[strings.LastIndexByte(s, ')')+2:])[0]
}

// threadStates lists the state letter of each thread of pid ("tid:S ...").
func threadStates(pid int) string {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*", pid))
	var out []string
	for _, task := range tasks {
		tid, err := strconv.Atoi(filepath.Base(task))
		if err == nil {
			out = append(out, fmt.Sprintf("%d:%s", tid, procState(tid)))
		}
	}
	return strings.Join(out, " ")
}

// seed is the seed of the random choices (STRESS_SEED, default 8).
func seed(t *testing.T) uint64 {
	t.Helper()
	if s := os.Getenv("STRESS_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("STRESS_SEED=%q: %v", s, err)
		}
		return n
	}
	return 8
}

// tracedBy is the process (thread group) tracing pid: 0 if none, -1 if pid
// is gone. (TracerPid names the tracer's thread, not its process.)
func tracedBy(pid int) int {
	tid := tracerPid(pid)
	if tid <= 0 {
		return tid
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", tid))
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Tgid:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return -1
}
