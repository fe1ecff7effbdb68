//go:build stress

package stress

import (
	"context"
	"encoding/csv"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/profile-dev/profile/internal/proctext"
	"github.com/profile-dev/profile/model"
	"github.com/profile-dev/profile/summary"
)

// Redis scenarios: a real server (Debian's redis-server, dynamic symbols
// only: every exported function of the executable is traced) under
// redis-benchmark. Skipped when redis-server, redis-cli or redis-benchmark
// is missing (apt-get install redis-server redis-tools).

// redisTools finds redis-server, redis-cli and redis-benchmark, or skips.
func redisTools(t *testing.T) (server string) {
	t.Helper()
	for _, name := range []string{"redis-server", "redis-cli", "redis-benchmark"} {
		path, err := exec.LookPath(name)
		if err != nil {
			t.Skipf("%s not installed (apt-get install redis-server redis-tools): %v", name, err)
		}
		if name == "redis-server" {
			server = path
		}
	}
	return server
}

// freePort is a TCP port of 127.0.0.1 nobody listens on (at the moment).
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// redisArgs are the server's arguments: no persistence, loopback only.
func redisArgs(port string) []string {
	return []string{"--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"}
}

// redisCLI runs redis-cli -p port args (at most 30 s) and returns its
// output without carriage returns.
func redisCLI(port string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "redis-cli", append([]string{"-p", port}, args...)...).CombinedOutput()
	return strings.ReplaceAll(string(out), "\r", ""), err
}

// waitRedis waits until the server on port answers PING with PONG; srv is
// the process that must not end meanwhile (the server or its profiler).
func waitRedis(t *testing.T, port string, srv *proc) time.Duration {
	t.Helper()
	t0 := time.Now()
	for time.Since(t0) < 30*time.Second {
		if srv.exited() {
			t.Fatalf("%s ended before answering PING: %s, stderr %q, stdout %q",
				srv.cmd.Args[0], srv.status(), srv.stderr.String(), srv.stdout.String())
		}
		if out, err := redisCLI(port, "ping"); err == nil && strings.TrimSpace(out) == "PONG" {
			return time.Since(t0)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("redis on port %s: no PONG within 30 s", port)
	return 0
}

// cmdStat is one cmdstat_ line of INFO commandstats.
type cmdStat struct {
	Calls, Rejected, Failed int64
}

// commandStats reads INFO commandstats: command name → counts.
func commandStats(t *testing.T, port string) map[string]cmdStat {
	t.Helper()
	out, err := redisCLI(port, "info", "commandstats")
	if err != nil {
		t.Fatalf("redis-cli info commandstats: %v: %s", err, out)
	}
	stats := map[string]cmdStat{}
	for _, line := range strings.Split(out, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_")
		if !ok {
			continue
		}
		name, fields, ok := strings.Cut(rest, ":")
		if !ok {
			t.Fatalf("commandstats line %q", line)
		}
		var s cmdStat
		for _, kv := range strings.Split(fields, ",") {
			k, v, _ := strings.Cut(kv, "=")
			n, _ := strconv.ParseInt(v, 10, 64)
			switch k {
			case "calls":
				s.Calls = n
			case "rejected_calls":
				s.Rejected = n
			case "failed_calls":
				s.Failed = n
			}
		}
		stats[name] = s
	}
	if len(stats) == 0 {
		t.Fatalf("no cmdstat_ line in INFO commandstats: %q", out)
	}
	return stats
}

// checkNoFailedCalls fails the test for any rejected or failed command.
func checkNoFailedCalls(t *testing.T, what string, stats map[string]cmdStat) {
	t.Helper()
	for name, s := range stats {
		if s.Rejected != 0 || s.Failed != 0 {
			t.Errorf("%s: %s: %d rejected, %d failed calls", what, name, s.Rejected, s.Failed)
		}
	}
}

// benchmark runs redis-benchmark -t tests -n n --csv (one request per
// round trip, 50 clients) and returns requests/s by test name ("SET").
// It fails the test unless redis-benchmark exits 0 with nothing on stderr
// (where it reports errors).
func benchmark(t *testing.T, port, tests string, n int) map[string]float64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "redis-benchmark", "-p", port, "-t", tests, "-n", strconv.Itoa(n), "-P", "1", "-q", "--csv")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil || strings.TrimSpace(stderr.String()) != "" {
		t.Fatalf("redis-benchmark -t %s -n %d: %v, stderr %q, stdout %q", tests, n, err, stderr.String(), out)
	}
	recs, err := csv.NewReader(strings.NewReader(string(out))).ReadAll()
	if err != nil {
		t.Fatalf("redis-benchmark CSV: %v: %q", err, out)
	}
	rps := map[string]float64{}
	for _, rec := range recs {
		if len(rec) < 2 || rec[0] == "test" {
			continue
		}
		v, err := strconv.ParseFloat(rec[1], 64)
		if err != nil {
			t.Fatalf("redis-benchmark CSV line %q: %v", rec, err)
		}
		rps[rec[0]] = v
	}
	for _, name := range strings.Split(tests, ",") {
		if _, ok := rps[strings.ToUpper(name)]; !ok {
			t.Fatalf("redis-benchmark CSV without %s: %q", strings.ToUpper(name), out)
		}
	}
	return rps
}

// 20,000 SET, GET, INCR and LPUSH under profile record --probes inline:
// the profile counts each command's function exactly as often as redis
// counted the command.
func TestRedisRecordCountsCommands(t *testing.T) {
	redisServer := redisTools(t)
	sc := begin(t, "redis-record")
	dir := t.TempDir()
	port := freePort(t)
	out := filepath.Join(dir, "redis.data")
	prof := startProfile(t, dir, append([]string{"record", "--stats", "--probes", "inline", "-o", out, "--", redisServer}, redisArgs(port)...)...)
	// Runs before startProfile's SIGTERM: a failed test stops the server.
	t.Cleanup(func() {
		if !prof.exited() {
			redisCLI(port, "shutdown", "nosave")
			prof.wait(10 * time.Second)
		}
	})
	up := waitRedis(t, port, prof.proc)
	t.Logf("redis-server under profile record answered PING after %v", up.Round(time.Millisecond))

	rps := benchmark(t, port, "set,get,incr,lpush", 20000)
	stats := commandStats(t, port)
	checkNoFailedCalls(t, "commandstats", stats)
	if out, err := redisCLI(port, "shutdown", "nosave"); err != nil {
		t.Logf("redis-cli shutdown nosave: %v: %s", err, out)
	}
	if code := prof.finish(t, 60*time.Second); code != 0 {
		t.Fatalf("profile record: exit status %d, stderr %q", code, prof.stderr.String())
	}
	p := readProfile(t, out)
	if p.Meta.Partial || len(p.Processes) == 0 || !p.Processes[0].Exited || p.Processes[0].ExitCode != 0 {
		t.Errorf("meta %+v, processes %+v: want a complete profile of a server that exited 0", p.Meta, p.Processes)
	}
	got := programCalls(p)
	var figures []string
	for _, cmd := range []string{"set", "get", "incr", "lpush"} {
		fn := cmd + "Command"
		want := stats[cmd].Calls
		if want == 0 {
			t.Errorf("commandstats: no %s calls: %v", cmd, stats)
		}
		if c := int64(got[fn].Calls); c != want {
			t.Errorf("%s: %d calls in the profile, cmdstat_%s:calls=%d", fn, c, cmd, want)
		}
		figures = append(figures, fmt.Sprintf("%s %d/%d", fn, got[fn].Calls, want))
	}
	if t.Failed() {
		logProfileInfo(t, dir, out, prof)
	}
	t.Logf("requests/s under record: SET %.0f, GET %.0f, INCR %.0f, LPUSH %.0f", rps["SET"], rps["GET"], rps["INCR"], rps["LPUSH"])
	sc.done("profile/commandstats calls: %s; %d traced calls, %d threads, %s; requests/s under record: SET %.0f GET %.0f INCR %.0f LPUSH %.0f",
		strings.Join(figures, ", "), p.Meta.TracedCalls, len(p.Threads), ringStats(prof), rps["SET"], rps["GET"], rps["INCR"], rps["LPUSH"])
}

// statLine is the value of a line "key: value" of profile --stats's
// output ("" if absent).
func statLine(stderr, key string) string {
	for _, line := range strings.Split(stderr, "\n") {
		if v, ok := strings.CutPrefix(line, key+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// ringStats sums up inline probes' ring figures from --stats's output.
func ringStats(prof profiler) string {
	e := prof.stderr.String()
	return fmt.Sprintf("ring stalls %s, events dropped %s", statLine(e, "ring stalls"), statLine(e, "events dropped"))
}

// logProfileInfo logs, for a failed check, what the profiler said and
// what profile info says of the profile out.
func logProfileInfo(t *testing.T, dir, out string, prof profiler) {
	t.Helper()
	info := exec.Command(profileBin, "info", out)
	info.Dir = dir
	b, err := info.CombinedOutput()
	t.Logf("profile stderr:\n%s\nprofile info %s (%v):\n%s", prof.stderr.String(), filepath.Base(out), err, b)
}

// attachedRun is one redis-benchmark run under profile attach.
type attachedRun struct {
	rps         map[string]float64
	tracedCalls int64
	ring        string // ringStats
}

// benchmarkAttached attaches profile (--probes probes) to the server,
// runs redis-benchmark -t set,get -n n, detaches with SIGINT and checks:
// profile exits 0, every request was served without a failed call, the
// profile counts setCommand and getCommand exactly as often as redis counted
// SET and GET while it was attached, and the server's text equals its
// files again.
func benchmarkAttached(t *testing.T, dir, port string, srv *proc, probes string, n int) attachedRun {
	t.Helper()
	failedBefore := t.Failed()
	pid := srv.pid()
	out := filepath.Join(dir, probes+".data")
	prof := startProfile(t, dir, "attach", "--stats", "--pid", strconv.Itoa(pid), "--probes", probes, "-o", out)
	t0 := time.Now()
	for tracedBy(pid) != prof.pid() {
		if prof.exited() {
			t.Fatalf("%s: profile attach ended before attaching: %s, stderr %q", probes, prof.status(), prof.stderr.String())
		}
		if time.Since(t0) > 20*time.Second {
			t.Fatalf("%s: not traced by the profiler 20 s after its start (TracerPid %d)", probes, tracerPid(pid))
		}
		time.Sleep(10 * time.Millisecond)
	}
	waitInstrumented(t, pid, prof)
	// The probes go in while the server is stopped: its PONG says they
	// are all in. Counting starts afresh from here.
	waitRedis(t, port, srv)
	if out, err := redisCLI(port, "config", "resetstat"); err != nil || strings.TrimSpace(out) != "OK" {
		t.Fatalf("redis-cli config resetstat: %v: %q", err, out)
	}
	t.Logf("%s: attached and instrumented %v after the profiler's start", probes, time.Since(t0).Round(time.Millisecond))

	rps := benchmark(t, port, "set,get", n)
	stats := commandStats(t, port)
	checkNoFailedCalls(t, probes+": commandstats", stats)
	for _, cmd := range []string{"set", "get"} {
		if c := stats[cmd].Calls; c != int64(n) {
			t.Errorf("%s: cmdstat_%s:calls=%d, redis-benchmark sent %d", probes, cmd, c, n)
		}
	}

	prof.cmd.Process.Signal(syscall.SIGINT)
	if code := prof.finish(t, 60*time.Second); code != 0 {
		t.Fatalf("%s: profile attach after SIGINT: exit status %d (%s), stderr %q", probes, code, prof.status(), prof.stderr.String())
	}
	if srv.exited() {
		t.Fatalf("%s: redis-server %s after detach, stderr %q", probes, srv.status(), srv.stderr.String())
	}
	if err := proctext.MatchesDisk(pid); err != nil {
		t.Errorf("%s: after detach: %v", probes, err)
	}
	p := readProfile(t, out)
	if p.Meta.Crash != nil {
		t.Errorf("%s: profile records a crash: %+v", probes, p.Meta.Crash)
	}
	got := programCalls(p)
	for _, cmd := range []string{"set", "get"} {
		fn := cmd + "Command"
		if c, want := int64(got[fn].Calls), stats[cmd].Calls; c != want {
			t.Errorf("%s: %s: %d calls in the profile, cmdstat_%s:calls=%d", probes, fn, c, cmd, want)
		}
	}
	if probes == "inline" {
		busyRanksWork(t, p)
	}
	if t.Failed() && !failedBefore {
		logProfileInfo(t, dir, out, prof)
	}
	return attachedRun{rps: rps, tracedCalls: p.Meta.TracedCalls, ring: ringStats(prof)}
}

// redis-benchmark SET and GET on a server running untraced, then with
// profile attach --probes inline, then --probes trap: inline probes keep
// at least 30% of the untraced throughput, and every request is served.
func TestRedisAttachThroughput(t *testing.T) {
	const (
		n          = 100000 // requests per test, untraced and inline
		nTrap      = 2000   // with trap probes (~100 requests/s)
		inlineMinR = 0.30
	)
	redisServer := redisTools(t)
	sc := begin(t, "redis-attach")
	dir := t.TempDir()
	port := freePort(t)
	cmd := exec.Command(redisServer, redisArgs(port)...)
	cmd.Dir = dir
	srv := start(t, cmd, syscall.SIGKILL)
	waitRedis(t, port, srv)

	untraced := benchmark(t, port, "set,get", n)
	t.Logf("untraced: SET %.0f, GET %.0f requests/s", untraced["SET"], untraced["GET"])
	inline := benchmarkAttached(t, dir, port, srv, "inline", n)
	t.Logf("inline: SET %.0f (%.0f%%), GET %.0f (%.0f%%) requests/s, %d traced calls, %s",
		inline.rps["SET"], 100*inline.rps["SET"]/untraced["SET"], inline.rps["GET"], 100*inline.rps["GET"]/untraced["GET"], inline.tracedCalls, inline.ring)
	trap := benchmarkAttached(t, dir, port, srv, "trap", nTrap)
	t.Logf("trap: SET %.0f (%.2f%%), GET %.0f (%.2f%%) requests/s, %d traced calls",
		trap.rps["SET"], 100*trap.rps["SET"]/untraced["SET"], trap.rps["GET"], 100*trap.rps["GET"]/untraced["GET"], trap.tracedCalls)

	for _, test := range []string{"SET", "GET"} {
		if r := inline.rps[test] / untraced[test]; r < inlineMinR {
			t.Errorf("%s under profile attach --probes inline: %.0f requests/s, %.0f%% of untraced %.0f; want at least %.0f%%",
				test, inline.rps[test], 100*r, untraced[test], 100*inlineMinR)
		}
	}

	// The server still works and ends normally.
	if out, err := redisCLI(port, "shutdown", "nosave"); err != nil {
		t.Logf("redis-cli shutdown nosave: %v: %s", err, out)
	}
	if !srv.wait(10 * time.Second) {
		t.Fatal("redis-server still running 10 s after SHUTDOWN NOSAVE")
	}
	if code := srv.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("redis-server: %s, want exit status 0 (stderr %q)", srv.status(), srv.stderr.String())
	}
	sc.done("requests/s untraced SET %.0f GET %.0f (n=%d); inline attached SET %.0f (%.0f%%) GET %.0f (%.0f%%) (n=%d, %d traced calls, %s); trap attached SET %.1f (%.2f%%) GET %.1f (%.2f%%) (n=%d, %d traced calls)",
		untraced["SET"], untraced["GET"], n,
		inline.rps["SET"], 100*inline.rps["SET"]/untraced["SET"], inline.rps["GET"], 100*inline.rps["GET"]/untraced["GET"], n, inline.tracedCalls, inline.ring,
		trap.rps["SET"], 100*trap.rps["SET"]/untraced["SET"], trap.rps["GET"], 100*trap.rps["GET"]/untraced["GET"], nTrap, trap.tracedCalls)
}

// busyRanksWork checks what a user of a server sees first: summary's
// default (busy) times rank redis's command processing above the idle
// waits of its background threads, which wall time ranks first (epoll_wait
// keeps its CPU time inside the kernel, which is work, not waiting).
func busyRanksWork(t *testing.T, p *model.Profile) {
	t.Helper()
	r, err := summary.Compute(p, summary.Options{Busy: true})
	if err != nil {
		t.Fatal(err)
	}
	total := map[string]int64{}
	for _, f := range r.Functions {
		total[f.Name] = f.TotalNs
	}
	work := total["processCommand"]
	if work == 0 {
		t.Errorf("busy summary: processCommand has no time")
	}
	for _, wait := range []string{"pthread_cond_wait", "pthread_cond_timedwait"} {
		if total[wait] >= work {
			t.Errorf("busy summary: %s %v ranks at or above processCommand %v", wait, time.Duration(total[wait]), time.Duration(work))
		}
	}
}
