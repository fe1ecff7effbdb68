package cmd_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/profile-dev/profile/model"
)

// rateTarget runs the rate workload (hot() 1,000 times a second) until the
// test ends; lines gives its per-second report lines so far.
func rateTarget(t *testing.T, args ...string) (cmd *exec.Cmd, lines func() []string) {
	t.Helper()
	cmd = exec.Command(wl(t, "rate"), args...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var got []string
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			mu.Lock()
			got = append(got, sc.Text())
			mu.Unlock()
		}
	}()
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), got...)
	}
}

// elapsed is the session time in top's title.
var elapsed = regexp.MustCompile(`  ([\d.]+)s  threads`)

var secondLine = regexp.MustCompile(`^second \d+: tick=\d+ hot=\d+ light=(\d+)$`)

// lightRate is the workload's own rate of light() over its last reported
// seconds (at most n).
func lightRate(t *testing.T, lines []string, n int) float64 {
	t.Helper()
	var sum, k float64
	for i := len(lines) - 1; i >= 0 && int(k) < n; i-- {
		if m := secondLine.FindStringSubmatch(lines[i]); m != nil {
			v, _ := strconv.ParseFloat(m[1], 64)
			sum += v
			k++
		}
	}
	if k == 0 {
		t.Fatalf("the workload reported no second: %q", lines)
	}
	return sum / k
}

// stillRuns checks the target lives and goes on reporting.
func stillRuns(t *testing.T, target *exec.Cmd, lines func() []string) {
	t.Helper()
	n := len(lines())
	time.Sleep(2500 * time.Millisecond)
	if err := target.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("target gone after top: %v", err)
	}
	if got := lines(); len(got) <= n {
		t.Fatalf("target stopped reporting after top: %q", got)
	}
}

// functionCalls sums each function's calls over a profile's threads.
func functionCalls(p *model.Profile) map[string]int64 {
	calls := map[string]int64{}
	for _, th := range p.Threads {
		for _, n := range th.Nodes {
			if n.Func != model.StartFunc {
				calls[p.FuncName(n.Func)] += n.Calls
			}
		}
		for _, a := range th.Arcs { // calls of a function moved to counting
			calls[p.FuncName(a.Callee)] += a.Calls
		}
	}
	return calls
}

// profile top in a terminal (tmux), sorted by calls/s: the top row is
// light() at the workload's own rate; T lists its thread; q detaches,
// writes the profile and leaves the target running. (Light work: the workload keeps its rate on
// a loaded machine.)
func TestTopInTmux(t *testing.T) {
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("tmux not installed (apt-get install -y tmux)")
	}
	dir := t.TempDir()
	target, lines := rateTarget(t, "--work", "50")
	session := fmt.Sprintf("profile-top-%d", os.Getpid())
	shell := fmt.Sprintf("cd %s && %s top --pid %d --interval 1s --sort calls/s -o top.data 2>top.err; echo $? >top.status",
		dir, profileBin, target.Process.Pid)
	if out, err := exec.Command(tmux, "new-session", "-d", "-s", session, "-x", "150", "-y", "40", shell).CombinedOutput(); err != nil {
		t.Fatalf("tmux: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command(tmux, "kill-session", "-t", session).Run() })
	capture := func() string {
		out, _ := exec.Command(tmux, "capture-pane", "-p", "-t", session).Output()
		return string(out)
	}

	// The first table row after three refreshes: "calls/s ... name".
	var screen string
	var fields []string
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		time.Sleep(500 * time.Millisecond)
		screen = capture()
		ls := strings.Split(screen, "\n")
		for i, l := range ls {
			if strings.Contains(l, "CALLS/S") && i+1 < len(ls) {
				fields = strings.Fields(ls[i+1])
			}
		}
		if m := elapsed.FindStringSubmatch(screen); m != nil && fields != nil {
			if s, _ := strconv.ParseFloat(m[1], 64); s >= 3.5 {
				break
			}
		}
	}
	if len(fields) < 8 {
		b, _ := os.ReadFile(filepath.Join(dir, "top.err"))
		t.Fatalf("no table on the screen:\n%s\nstderr: %s", screen, b)
	}
	want := lightRate(t, lines(), 3)
	rate, _ := strconv.ParseFloat(strings.ReplaceAll(fields[0], ",", ""), 64)
	if fields[len(fields)-1] != "light" || rate < 0.9*want || rate > 1.1*want {
		t.Fatalf("top row %q: want light at %.0f calls/s (the workload's own rate)\n%s", fields, want, screen)
	}

	// T: the thread list, the target's one thread by tid and /proc's name.
	exec.Command(tmux, "send-keys", "-t", session, "T").Run()
	threadRow := regexp.MustCompile(fmt.Sprintf(`(?m)^\s+%d\s+%d\s+[\d.]+%%.* rate\s*$`, target.Process.Pid, target.Process.Pid))
	for i := 0; i < 20 && !threadRow.MatchString(screen); i++ {
		time.Sleep(250 * time.Millisecond)
		screen = capture()
	}
	if !threadRow.MatchString(screen) || !strings.Contains(screen, "(every thread)") {
		t.Fatalf("no thread list after T:\n%s", screen)
	}
	exec.Command(tmux, "send-keys", "-t", session, "q").Run()
	var status []byte
	for i := 0; i < 100 && len(status) == 0; i++ {
		time.Sleep(200 * time.Millisecond)
		status, _ = os.ReadFile(filepath.Join(dir, "top.status"))
	}
	if strings.TrimSpace(string(status)) != "0" {
		b, _ := os.ReadFile(filepath.Join(dir, "top.err"))
		t.Fatalf("top after q: status %q, stderr %s", status, b)
	}
	p, err := model.ReadFile(filepath.Join(dir, "top.data"))
	if err != nil {
		t.Fatal(err)
	}
	// Three light() per tick, give or take the lights of a tick in flight
	// at attach (counted, the tick not) or cut by the detach.
	if c := functionCalls(p); c["hot"] == 0 || c["light"] < 3*c["tick"]-3 || c["light"] > 3*c["tick"]+3 {
		t.Fatalf("profile calls %v", c)
	}
	stillRuns(t, target, lines)
}

// Piped with --format json: a line per interval, whose calls add up to the
// written profile's counts.
func TestTopJSONLinesAddUp(t *testing.T) {
	dir := t.TempDir()
	target, lines := rateTarget(t)
	time.Sleep(300 * time.Millisecond)
	out, stderr, code := run(t, dir, "top", "--pid", itoa(target.Process.Pid), "--format", "json",
		"--interval", "300ms", "--duration", "3s", "-o", "t.data")
	if code != 0 {
		t.Fatalf("top: %d %s", code, stderr)
	}
	sum := map[string]int64{}
	var n, finals int
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var v struct {
			Final     bool `json:"final"`
			Functions []struct {
				Name  string `json:"name"`
				Calls int64  `json:"calls"`
			} `json:"functions"`
		}
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		n++
		if v.Final {
			finals++
		}
		for _, f := range v.Functions {
			sum[f.Name] += f.Calls
		}
	}
	if n < 5 || finals != 1 {
		t.Fatalf("%d lines, %d final:\n%s", n, finals, out)
	}
	p, err := model.ReadFile(filepath.Join(dir, "t.data"))
	if err != nil {
		t.Fatal(err)
	}
	// The sums below are the test; this only makes sure they are sums of
	// something. How many calls 3 s hold depends on the machine's load
	// (rate falls behind its 1,000 ticks a second on a busy one: 890 in
	// all once beside other tests).
	calls := functionCalls(p)
	if calls["hot"] < 10 {
		t.Fatalf("profile calls %v", calls)
	}
	for name, c := range calls {
		if sum[name] != c {
			t.Errorf("%s: lines sum to %d calls, the profile has %d", name, sum[name], c)
		}
	}
	stillRuns(t, target, lines)
}

// Piped without --format: a plain table per interval, in busy times, and
// a table of the threads.
func TestTopPipedTable(t *testing.T) {
	dir := t.TempDir()
	target, _ := rateTarget(t)
	out, stderr, code := run(t, dir, "top", "--pid", itoa(target.Process.Pid), "--interval", "500ms",
		"--duration", "2s", "--rows", "2", "-o", "t.data")
	if code != 0 {
		t.Fatalf("top: %d %s", code, stderr)
	}
	if strings.Count(out, "CALLS/S") < 3 || !strings.Contains(out, "(final)") || strings.Contains(out, "\x1b") ||
		strings.Count(out, "busy times") != strings.Count(out, "pid ") || !strings.Contains(out, "THREAD") {
		t.Fatalf("piped output:\n%s", out)
	}
	tables := strings.Split(out, "pid ")
	last := tables[len(tables)-1]
	if !strings.Contains(last, " hot ") && !strings.Contains(last, "| hot") {
		t.Fatalf("last table without hot:\n%s", last)
	}
}

func TestTopUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"top"},
		{"top", "--pid", "1", "--interval", "10ms"},
		{"top", "--pid", "1", "--format", "xml"},
		{"top", "--pid", "1", "--sort", "speed"},
		{"top", "--pid", "1", "--scope", "idle"},
	} {
		_, stderr, code := run(t, t.TempDir(), args...)
		if code != 2 || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr)
		}
	}
}

// attach on a terminal shows a progress line (elapsed, calls/s, threads,
// processes, probe kinds), refreshed while the target runs; piped, it
// shows none.
func TestAttachProgressOnlyOnATerminal(t *testing.T) {
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("tmux not installed (apt-get install -y tmux)")
	}
	dir := t.TempDir()
	target, _ := rateTarget(t, "--work", "50")
	session := fmt.Sprintf("profile-progress-%d", os.Getpid())
	shell := fmt.Sprintf("cd %s && %s attach --pid %d --duration 4s -o a.data; sleep 30", dir, profileBin, target.Process.Pid)
	if out, err := exec.Command(tmux, "new-session", "-d", "-s", session, "-x", "150", "-y", "10", shell).CombinedOutput(); err != nil {
		t.Fatalf("tmux: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command(tmux, "kill-session", "-t", session).Run() })
	progress := regexp.MustCompile(`([\d.]+)s  [\d,]+ calls  [\d,]+ calls/s  1 threads  1 processes  probes \d+ inline \d+ trap`)
	var seen []string
	for i := 0; i < 60 && len(seen) < 2; i++ {
		time.Sleep(250 * time.Millisecond)
		out, _ := exec.Command(tmux, "capture-pane", "-p", "-t", session).Output()
		if m := progress.FindStringSubmatch(string(out)); m != nil && (len(seen) == 0 || seen[len(seen)-1] != m[1]) {
			seen = append(seen, m[1])
		}
	}
	if len(seen) < 2 {
		out, _ := exec.Command(tmux, "capture-pane", "-p", "-t", session).Output()
		t.Fatalf("no refreshed progress line on the terminal (saw %q):\n%s", seen, out)
	}
	for i := 0; i < 100; i++ { // the terminal's attach ends and writes
		if _, err := os.Stat(filepath.Join(dir, "a.data")); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	_, stderr, code := run(t, dir, "attach", "--pid", itoa(target.Process.Pid), "--duration", "1s", "-o", "b.data")
	if code != 0 || strings.Contains(stderr, "calls/s") || strings.Contains(stderr, "\r") {
		t.Fatalf("piped attach: exit %d, stderr %q", code, stderr)
	}
}
