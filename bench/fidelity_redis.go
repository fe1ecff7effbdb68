package main

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/profile-dev/profile/model"
)

// The fidelity rows' server: Debian's redis-server under redis-benchmark
// (-t set,get), unpinned and pinned (redisLayouts). perf samples the
// untraced server for the span of perfBenchmarks benchmarks, twice;
// profile attach traces every function
// of its executable for the span of another, raw and compensated
// (--sample=0), and with the default probes (sampled, for the span of
// sampledBenchmarks).
// Samples inside a waiting call (epoll_wait: the profile's busy scope
// leaves that time out) are left out; the rest go to the innermost frame
// in the executable.

// redisRequests is each benchmark's requests per command.
const redisRequests = 300000

// perfBenchmarks is how many benchmarks each perf run samples, and
// sampledBenchmarks how many the default attach spans: the shares are
// of the samples outside waiting calls, some 2,200 a benchmark (most of
// the server's time on a CPU is the kernel's, inside read, write and
// epoll_wait). With 4 and 3, two perf runs were 4.2-6.3 points apart and
// the profile's own runs as far from each other as sampling alone puts
// them (two benchmarks each: 6.5-9.4 points apart, 6.7 by sampling
// alone), which moved the distance to perf by as much from run to run.
// The profile samples as many benchmarks as each perf run: with fewer
// (6 against 8 until session 47) its shares varied more than perf's, and
// the floor, two perf runs apart, was not the noise the profile's
// distance carries.
const (
	perfBenchmarks    = 8
	sampledBenchmarks = perfBenchmarks
)

type redisFidelity struct {
	perfN            [2]int
	floor, raw, comp float64
	sampled          float64            // attached with the default probes (sampled)
	waitingOut       float64            // the same with the time inside waiting calls left out, against perf's busy shares
	untraced, traced map[string]float64 // requests/s by command, untraced and attached (compensated run)
	untracedRuns     [2][]float64       // the untraced GET rates before the traced runs and after them
	sampledRPS       map[string]float64 // requests/s by command, attached with the default probes
	rows             []fidelityRow
	// mainShare is the main thread's share of its wall time on a CPU
	// during the default attach: by perf stat's task-clock of that thread
	// (perf), by the profile's busy time (busy: the program's samples) and
	// with the probes' samples too (withProbes, an estimate: the profile
	// counts them for all threads; the thread gets them in proportion).
	mainShare struct{ perf, busy, withProbes float64 }
	// loops is how many times round its event loop (epoll_wait calls) the
	// server went per request: untraced by perf stat's count of the
	// system call (0: not counted, the tracepoint refused), traced by the
	// default profile's exact count, under perf record by perf stat's
	// count during the first perf run (perf, the reference's own). A
	// server slower per request serves more of them each time round: its
	// work per iteration (aeMain's own code, beforeSleep) then takes a
	// smaller share. perf record's own sampling (a 16 KB stack copy a
	// sample) moves it as far as the probes do: on the AMD host of
	// session 46, 0.62-0.66 untraced, 0.32-0.39 under perf record, 0.33-0.34
	// with the default probes, pinned.
	loops struct{ untraced, perf, traced float64 }
}

// redisServer is a redis-server of the bench's own.
type redisServer struct {
	cmd  *exec.Cmd
	port int
	exe  string   // the executable the server runs (Debian's is redis-check-rdb)
	near []string // the CPU setting of the benchmark and of the tools beside it (perf, profile)
}

// redisLayout is where the server and what runs beside it go: unpinned,
// or the server alone on CPU 0 and the rest on CPU 1. Unpinned on two
// CPUs the event loop's batching follows where the scheduler puts the
// three processes: the untraced server under perf record went round its
// loop 0.50-0.52 times a request, traced with the default probes
// 0.39-0.45; pinned 0.55 and 0.55-0.59.
type redisLayout struct {
	name         string
	server, near []string
}

var redisLayouts = []redisLayout{
	{name: "unpinned"},
	{"pinned: the server on CPU 0, the benchmark, perf and the profiler on CPU 1", []string{"taskset", "-c", "0"}, []string{"taskset", "-c", "1"}},
}

func startRedis(dir string, at redisLayout) (*redisServer, string, error) {
	if at.server != nil && runtime.NumCPU() < 2 {
		return nil, "the pinned layout needs two CPUs", nil
	}
	for _, tool := range []string{"redis-server", "redis-benchmark", "perf"} {
		if _, err := exec.LookPath(tool); err != nil {
			return nil, tool + " is not installed", nil
		}
	}
	path, _ := exec.LookPath("redis-server")
	exe, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, "", err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	argv := append(slices.Clone(at.server), path, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", dir)
	cmd := exec.Command(argv[0], argv[1:]...)
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	s := &redisServer{cmd: cmd, port: port, exe: exe, near: at.near}
	for range 100 {
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			c.Write([]byte("PING\r\n"))
			line, _ := bufio.NewReader(c).ReadString('\n')
			c.Close()
			if strings.HasPrefix(line, "+PONG") {
				return s, "", nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	s.stop()
	return nil, "", fmt.Errorf("redis-server on port %d never answered", port)
}

func (s *redisServer) stop() {
	s.cmd.Process.Kill()
	s.cmd.Wait()
}

var rpsRE = regexp.MustCompile(`(?m)^"?(SET|GET)"?[:,]\s*"?([0-9.]+)`)

// benchmark runs redis-benchmark against s: requests/s by command.
func (s *redisServer) benchmark() (map[string]float64, error) {
	argv := append(slices.Clone(s.near), "redis-benchmark", "-p", strconv.Itoa(s.port), "-t", "set,get", "-n", strconv.Itoa(redisRequests),
		"-c", "20", "-q")
	out, err := exec.Command(argv[0], argv[1:]...).Output()
	if err != nil {
		return nil, fmt.Errorf("redis-benchmark: %w", err)
	}
	// -q prints "SET: 41271.23 requests per second, p50=..." with
	// carriage returns between progress lines.
	rps := map[string]float64{}
	for _, m := range rpsRE.FindAllStringSubmatch(strings.ReplaceAll(string(out), "\r", "\n"), -1) {
		v, err := strconv.ParseFloat(m[2], 64)
		if err == nil {
			rps[m[1]] = v
		}
	}
	if rps["SET"] == 0 || rps["GET"] == 0 {
		return nil, fmt.Errorf("redis-benchmark said %q", lastLine(string(out)))
	}
	return rps, nil
}

// redisWarmRuns is how many benchmarks a fresh server runs before any
// is measured: a fresh redis-server speeds up over its first few (on the
// AMD EPYC VM, nine in a row: 51,500, 58,500, 64,500, 74,000, 63,300,
// 70,700, 80,600, 73,000 and 72,100 GET/s), and with one, the untraced
// runs before the traced ones read 40,000-58,000 GET/s against
// 72,000-85,000 after them in both of a day's runs: a reference lower
// than the traced runs' surroundings.
const redisWarmRuns = 4

// rateRuns is how many benchmarks the untraced GET and SET rates are
// taken from before the traced runs, and again after them (with the
// default probes, the sampledBenchmarks the attach spans): one run on two
// vCPUs lands at either of two rates some 20% apart (where the server,
// the benchmark and the tracer happen to share a CPU), for the untraced
// server too, and the server may drift over the minutes between; the
// untraced rate is the median of both sets, which bracket the traced
// runs.
const rateRuns = 3

// benchmarks runs n benchmarks: their requests/s, by command.
func (s *redisServer) benchmarks(n int) (map[string][]float64, error) {
	by := map[string][]float64{}
	for range n {
		rps, err := s.benchmark()
		if err != nil {
			return nil, err
		}
		for k, v := range rps {
			by[k] = append(by[k], v)
		}
	}
	return by, nil
}

// medians is the median of each command's requests/s over the sets.
func medians(sets ...map[string][]float64) map[string]float64 {
	by := map[string][]float64{}
	for _, set := range sets {
		for k, vs := range set {
			by[k] = append(by[k], vs...)
		}
	}
	out := map[string]float64{}
	for k, vs := range by {
		slices.Sort(vs)
		if n := len(vs); n%2 == 1 {
			out[k] = vs[n/2]
		} else {
			out[k] = (vs[n/2-1] + vs[n/2]) / 2
		}
	}
	return out
}

// during runs a tool beside n benchmarks (the median of their rates):
// started first, given settle to get going, stopped by SIGINT once the
// benchmarks are done.
func (s *redisServer) during(argv []string, settle time.Duration, n int) (map[string]float64, error) {
	argv = append(slices.Clone(s.near), argv...)
	cmd := exec.Command(argv[0], argv[1:]...)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	time.Sleep(settle)
	by, err := s.benchmarks(n)
	rps := medians(by)
	cmd.Process.Signal(syscall.SIGINT)
	werr := cmd.Wait()
	// perf ends by raising the SIGINT it handled: that is its success.
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGINT {
		werr = nil
	}
	if werr != nil && err == nil {
		err = fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), werr, lastLine(errb.String()))
	}
	return rps, err
}

// measureRedisFidelity measures the redis row in layout at; pinned, the
// raw and compensated runs are left out.
func measureRedisFidelity(c config, at redisLayout) (*redisFidelity, string, error) {
	s, why, err := startRedis(c.tmp, at)
	if s == nil {
		if why != "" {
			fmt.Printf("fidelity, redis: skipped: %s\n", why)
		}
		return nil, why, err
	}
	defer s.stop()
	fmt.Printf("fidelity, redis, %s:\n", at.name)
	f := &redisFidelity{}
	// Warm: the keys exist from then on, and the server runs at its
	// steady rate.
	if _, err := s.benchmarks(redisWarmRuns); err != nil {
		return nil, "", err
	}
	// The tracepoint needs tracefs and the right to read it: without, no
	// count and no line.
	loops, loopsErr := startPerfStat(c.tmp, "syscalls:sys_enter_epoll_wait", "-p", strconv.Itoa(s.cmd.Process.Pid))
	before, err := s.benchmarks(rateRuns)
	if err != nil {
		return nil, "", err
	}
	if loopsErr == nil {
		if n, _, err := loops.stop(); err == nil {
			f.loops.untraced = n / float64(rateRuns*2*redisRequests)
		}
	}
	var perf, onCPU [2]map[string]float64
	for i := range perf {
		data := filepath.Join(c.tmp, "perf.data")
		var loops *perfStat
		if i == 0 && loopsErr == nil {
			loops, _ = startPerfStat(c.tmp, "syscalls:sys_enter_epoll_wait", "-p", strconv.Itoa(s.cmd.Process.Pid))
		}
		if _, err := s.during(perfRecord(nil, data, "-p", strconv.Itoa(s.cmd.Process.Pid)), 500*time.Millisecond, perfBenchmarks); err != nil {
			return nil, "", err
		}
		if loops != nil {
			if n, _, err := loops.stop(); err == nil {
				f.loops.perf = n / float64(perfBenchmarks*2*redisRequests)
			}
		}
		shares, n, err := perfScriptShares(c, data, s.exe, true)
		if err != nil {
			return nil, "", err
		}
		if onCPU[i], _, err = perfScriptShares(c, data, s.exe, false); err != nil {
			return nil, "", err
		}
		perf[i], f.perfN[i] = shares, n
	}
	var prof [3]map[string]float64
	var waitingOut map[string]float64
	pid := s.cmd.Process.Pid
	for i, flags := range [][]string{{"--no-compensate", "--sample=0"}, {"--sample=0"}, nil} {
		if i < 2 && at.server != nil {
			continue
		}
		out := filepath.Join(c.tmp, "redis.data")
		argv := append([]string{c.profile, "attach", "--pid", strconv.Itoa(pid), "-o", out}, flags...)
		var stat *perfStat
		if i == 2 {
			// The main thread's time on a CPU by the kernel's count, over
			// the attach's window (perf starts first, ends last).
			if stat, err = startPerfStat(c.tmp, "task-clock", "-t", strconv.Itoa(pid)); err != nil {
				return nil, "", err
			}
		}
		runs := 1
		if i == 2 {
			runs = sampledBenchmarks
		}
		rps, err := s.during(argv, 2*time.Second, runs)
		if err != nil {
			return nil, "", err
		}
		p, err := model.ReadFile(out)
		if err != nil {
			return nil, "", err
		}
		if stat != nil {
			ms, wall, err := stat.stop()
			if err != nil {
				return nil, "", err
			}
			f.mainShare.perf = ms * 1e6 / float64(wall)
			if f.mainShare.busy, f.mainShare.withProbes, err = mainBusyShare(p, pid); err != nil {
				return nil, "", fmt.Errorf("%s: %w", out, err)
			}
			f.loops.traced = float64(callsOf(p, pid, "epoll_wait")) / float64(sampledBenchmarks*2*redisRequests)
			waitingOut = sharesWaitingOut(p, s.exe)
		}
		switch i {
		case 1:
			f.traced = rps
		case 2:
			f.sampledRPS = rps
		}
		prof[i] = busyShares(p.Busy(), filepath.Base(s.exe))
	}
	after, err := s.benchmarks(rateRuns)
	if err != nil {
		return nil, "", err
	}
	f.untraced, f.untracedRuns = medians(before, after), [2][]float64{before["GET"], after["GET"]}
	f.floor, f.raw, f.comp, f.sampled = tvd(perf[0], perf[1]), tvd(prof[0], perf[0]), tvd(prof[1], perf[0]), tvd(prof[2], onCPU[0])
	f.rows = shareRows(perf[0], perf[1], prof[0], prof[1], prof[2], onCPU[0])
	f.waitingOut = tvd(waitingOut, perf[0])
	for i := range f.rows {
		f.rows[i].waitingOut = waitingOut[f.rows[i].name]
	}
	if at.server == nil {
		fmt.Printf("  distance: perf vs perf %.1f points, raw %.1f, compensated %.1f, sampled %.1f; GET %.0f/s traced (%.0f/s default), %.0f/s untraced\n",
			f.floor, f.raw, f.comp, f.sampled, f.traced["GET"], f.sampledRPS["GET"], f.untraced["GET"])
	} else {
		fmt.Printf("  distance: perf vs perf %.1f points, sampled %.1f; GET %.0f/s default, %.0f/s untraced\n",
			f.floor, f.sampled, f.sampledRPS["GET"], f.untraced["GET"])
	}
	fmt.Printf("  default profile, functions with at least 1%% of perf's samples: %s (%s)\n", offByTwo(f.rows), perfSpread(f.rows))
	fmt.Printf("  waiting calls left out on both sides: distance %.1f points; functions with at least 1%% of perf's samples: %s\n", f.waitingOut, offByTwoBusy(f.rows))
	fmt.Printf("  main thread on a CPU: perf task-clock %.1f%%, profile busy %.1f%% (about %.1f%% with the probes)\n",
		100*f.mainShare.perf, 100*f.mainShare.busy, 100*f.mainShare.withProbes)
	fmt.Printf("  untraced GET/s: %s before the traced runs, %s after them\n", rates(f.untracedRuns[0]), rates(f.untracedRuns[1]))
	if f.loops.untraced > 0 {
		fmt.Printf("  event loop iterations a request: %.2f untraced, %.2f under perf record, %.2f traced\n", f.loops.untraced, f.loops.perf, f.loops.traced)
	}
	return f, "", nil
}

// perfStat is perf stat counting one event of a thread or process.
type perfStat struct {
	cmd   *exec.Cmd
	out   string
	event string
	start time.Time
}

// startPerfStat starts perf stat counting event for target (-t TID, -p
// PID).
func startPerfStat(dir, event string, target ...string) (*perfStat, error) {
	out := filepath.Join(dir, "perfstat.csv")
	cmd := exec.Command("perf", append([]string{"stat", "-x", ",", "-e", event, "-o", out}, target...)...)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &perfStat{cmd: cmd, out: out, event: event, start: time.Now()}, nil
}

// stop stops perf and returns its count (ms for task-clock) and the wall
// time it ran.
func (c *perfStat) stop() (float64, time.Duration, error) {
	c.cmd.Process.Signal(syscall.SIGINT)
	c.cmd.Wait()
	wall := time.Since(c.start)
	b, err := os.ReadFile(c.out)
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Split(line, ",")
		if len(f) > 2 && strings.HasPrefix(f[2], c.event) {
			v, err := strconv.ParseFloat(f[0], 64)
			if err != nil {
				return 0, 0, fmt.Errorf("perf stat: %q: %w", line, err)
			}
			return v, wall, nil
		}
	}
	return 0, 0, fmt.Errorf("perf stat said %q", lastLine(string(b)))
}

// mainBusyShare is thread tid's busy time in profile p over its
// traced wall time: the program's CPU samples, and with the samples in
// the probes' code added in proportion (the profile keeps their number for
// all threads; the main thread holds nearly all of redis's).
func mainBusyShare(p *model.Profile, tid int) (busy, withProbes float64, err error) {
	b := p.Busy()
	var wall, cpu, all int64
	for i, th := range p.Threads {
		all += b.Threads[i].TracedNs
		if th.Tid == tid {
			wall, cpu = th.TracedNs, b.Threads[i].TracedNs
		}
	}
	if wall == 0 || all == 0 {
		return 0, 0, fmt.Errorf("no thread %d", tid)
	}
	busy = float64(cpu) / float64(wall)
	withProbes = busy
	if c := p.Meta.CPUSamples; c != nil && c.Samples > 0 {
		probes := float64(c.InProbes) / float64(c.Samples) * float64(cpu) // the main thread's part of them
		withProbes = (float64(cpu) + probes) / float64(wall)
	}
	return busy, withProbes, nil
}

// callsOf is how many calls of the function named name thread tid made in
// profile p (a waiting call's calls are exact).
func callsOf(p *model.Profile, tid int, name string) int64 {
	var n int64
	for _, th := range p.Threads {
		if th.Tid != tid {
			continue
		}
		for _, nd := range th.Nodes {
			if p.Functions[nd.Func].Name == name {
				n += nd.Calls
			}
		}
	}
	return n
}
