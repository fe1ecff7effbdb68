package cmd_test

import (
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/profile-dev/profile/model"
)

// topLine is one line of profile top --format json.
type topLine struct {
	Scope       string `json:"scope"`
	LiveThreads int    `json:"live_threads"`
	TracedNs    int64  `json:"traced_ns"`
	Final       bool   `json:"final"`
	Functions   []struct {
		Name   string `json:"name"`
		Module string `json:"module"`
		Calls  int64  `json:"calls"`
		SelfNs int64  `json:"self_ns"`
	} `json:"functions"`
	Threads []struct {
		Pid      int      `json:"pid"`
		Tid      int      `json:"tid"`
		Name     string   `json:"name"`
		CPUPct   *float64 `json:"cpu_pct"`
		BusyNs   int64    `json:"busy_ns"`
		TracedNs int64    `json:"traced_ns"`
	} `json:"threads"`
}

// topJSON runs profile top --format json on pid with flags, for 3 s, and
// returns its lines: at least an interval's and the final one (a loaded
// machine can take a second to attach).
func topJSON(t *testing.T, pid int, flags ...string) []topLine {
	t.Helper()
	args := append([]string{"top", "--pid", itoa(pid), "--format", "json", "--interval", "400ms",
		"--duration", "3s", "-o", "t.data"}, flags...)
	out, stderr, code := run(t, t.TempDir(), args...)
	if code != 0 {
		t.Fatalf("top %v: exit %d %s", flags, code, stderr)
	}
	var lines []topLine
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var v topLine
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		lines = append(lines, v)
	}
	if len(lines) < 2 || !lines[len(lines)-1].Final {
		t.Fatalf("top %v: %d lines, the last final? %s", flags, len(lines), out)
	}
	return lines
}

// waitingCall tells whether a function of the JSON lines is a library's
// waiting call, as busy time takes them out (model.WaitingFuncs).
func waitingCall(name, module, exe string) bool {
	return module != exe && model.IsWaitingCall(strings.TrimPrefix(name, module+":"))
}

// procThreads reads pid's threads and their names from /proc, waiting
// until it has n.
func procThreads(t *testing.T, pid, n int) map[int]string {
	t.Helper()
	dir := filepath.Join("/proc", itoa(pid), "task")
	for i := 0; i < 100; i++ {
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(ents) == n {
			names := map[int]string{}
			for _, e := range ents {
				tid, _ := strconv.Atoi(e.Name())
				b, err := os.ReadFile(filepath.Join(dir, e.Name(), "comm"))
				if err != nil {
					t.Fatal(err)
				}
				names[tid] = strings.TrimSuffix(string(b), "\n")
			}
			return names
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("pid %d never had %d threads", pid, n)
	return nil
}

// The thread list of piped JSON on a multi-threaded workload (longrun: the
// main thread joining, two computing threads, one sleeping in
// clock_nanosleep): every line lists every thread /proc shows, with the
// name /proc's comm has, a CPU% between 0 and all the CPUs'; the threads'
// busy times add up to the line's (busy) traced time, and over the lines
// are within their traced times. Under busy time, the default, no waiting call leads
// the functions, and a waiting call has no self time.
func TestTopThreadList(t *testing.T) {
	target := exec.Command(wl(t, "longrun"), "--threads", "2", "--seconds", "60")
	if err := target.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { target.Process.Kill(); target.Wait() })
	pid := target.Process.Pid
	// longrun names no thread: /proc shows each with the program's name.
	names := procThreads(t, pid, 4)
	tids := slices.Sorted(maps.Keys(names))
	lines := topJSON(t, pid)
	// An interval's times can be negative: the compensated snapshots take
	// out, once a thread resumes, the time the profiler held it stopped,
	// though the snapshot before counted that time so far. Summed over
	// the lines they are the final profile's.
	waited := map[int]int64{}
	for i, l := range lines {
		if l.Scope != "busy" {
			t.Errorf("line %d: scope %q, want busy by default", i, l.Scope)
		}
		var got []int
		var busy int64
		for _, th := range l.Threads {
			got = append(got, th.Tid)
			if th.Pid != pid || th.Name != names[th.Tid] {
				t.Errorf("line %d: thread %+v, /proc names it %q in %d", i, th, names[th.Tid], pid)
			}
			if th.CPUPct == nil || *th.CPUPct < 0 || *th.CPUPct > 100*float64(runtime.NumCPU()) {
				t.Errorf("line %d: thread %d CPU %v, want 0 to %d%%", i, th.Tid, th.CPUPct, 100*runtime.NumCPU())
			}
			busy += th.BusyNs
			waited[th.Tid] += th.TracedNs - th.BusyNs
		}
		slices.Sort(got)
		if !slices.Equal(got, tids) {
			t.Errorf("line %d: threads %v, /proc has %v", i, got, tids)
		}
		if busy != l.TracedNs {
			t.Errorf("line %d: threads' busy times sum to %d ns, the line's traced time is %d ns", i, busy, l.TracedNs)
		}
		for j, f := range l.Functions {
			if waitingCall(f.Name, f.Module, "longrun") && (j == 0 || f.SelfNs != 0) {
				t.Errorf("line %d: waiting call %+v at row %d: leads or has self time", i, f, j)
			}
		}
	}
	// The sleeper's clock_nanosleep is waited time: traced, not busy.
	var sleepers int
	for tid, w := range waited {
		if w < 0 {
			t.Errorf("thread %d: busy time exceeds its traced time by %d ns", tid, -w)
		}
		if w > 0 {
			sleepers++
		}
	}
	if sleepers == 0 {
		t.Error("no thread waited: the sleeping thread's time is busy")
	}
}

// --scope wall shows the measured times: a thread sleeping 98% of the
// time (rate at 100 ticks a second, 200 µs of work each) has its
// clock_nanosleep lead the functions, where busy time ranks hot first and
// gives clock_nanosleep its calls but no time. The line's traced time is
// its thread's busy time, or under wall its traced time.
func TestTopScopeWall(t *testing.T) {
	target, _ := rateTarget(t, "--hz", "100", "--work", "200")
	time.Sleep(300 * time.Millisecond)
	lead := func(lines []topLine, scope string) (leaders []string) {
		for i, l := range lines {
			if l.Scope != scope {
				t.Errorf("line %d: scope %q, want %s", i, l.Scope, scope)
			}
			if len(l.Functions) > 0 {
				leaders = append(leaders, l.Functions[0].Name)
			}
		}
		return leaders
	}
	busy := topJSON(t, target.Process.Pid)
	if got := lead(busy, "busy"); slices.Contains(got, "libc.so.6:clock_nanosleep") || !slices.Contains(got, "hot") {
		t.Errorf("busy: leaders %q, want hot and never clock_nanosleep", got)
	}
	var sleeps int64
	for _, l := range busy {
		for _, f := range l.Functions {
			if f.Name == "libc.so.6:clock_nanosleep" {
				sleeps += f.Calls
				if f.SelfNs != 0 {
					t.Errorf("busy: %+v has self time", f)
				}
			}
		}
	}
	if sleeps == 0 {
		t.Error("busy: no clock_nanosleep calls")
	}
	wall := topJSON(t, target.Process.Pid, "--scope", "wall")
	if got := lead(wall, "wall"); !slices.Contains(got, "libc.so.6:clock_nanosleep") {
		t.Errorf("wall: leaders %q, want clock_nanosleep", got)
	}
	// Each line's traced time is its threads' busy time, or under wall
	// their traced time.
	for _, c := range []struct {
		lines []topLine
		wall  bool
	}{{busy, false}, {wall, true}} {
		for i, l := range c.lines {
			var sum int64
			for _, th := range l.Threads {
				if c.wall {
					sum += th.TracedNs
				} else {
					sum += th.BusyNs
				}
			}
			if sum != l.TracedNs || len(l.Threads) != 1 || l.Threads[0].Name != "rate" {
				t.Errorf("wall %v, line %d: traced %d ns, threads %+v", c.wall, i, l.TracedNs, l.Threads)
			}
		}
	}
}

// top takes attach's selection: -p A,B watches both processes, whose
// threads the thread list names by pid.
func TestTopSeveralProcesses(t *testing.T) {
	a, b := startLongrunFor(t, "5"), startLongrunFor(t, "5")
	lines := topJSON(t, a.Process.Pid, "--pid", itoa(b.Process.Pid))
	seen := map[int]bool{}
	for _, l := range lines {
		for _, th := range l.Threads {
			seen[th.Pid] = true
		}
	}
	if !seen[a.Process.Pid] || !seen[b.Process.Pid] || len(seen) != 2 {
		t.Errorf("threads of processes %v, want those of %d and %d", slices.Sorted(maps.Keys(seen)), a.Process.Pid, b.Process.Pid)
	}
}
