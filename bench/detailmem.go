package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/profile-dev/profile/model"
)

// The memory rows: `profile record --detail handle_request ... --
// requests 1000 SECONDS` (7 slow and 3 failing requests a round of ~150
// ms, served again and again), the profiler's VmRSS sampled every second.
// With the default --detail-limit of 1000 trees the limit fills after ~20
// s of the slow rule and the oldest trees are dropped from then on: the
// RSS at 10 s and at the end must stay within 10%.

// memEarly is when the first RSS figure is taken.
const memEarly = 10 * time.Second

// memRun is one memory run: its probes and detail flags. Runs of a group
// go at the same time (inline runs mostly sleep with the workload); the
// groups go one after the other.
type memRun struct {
	probes string
	flags  []string
	group  int
}

var memRuns = []memRun{
	{"auto", []string{"--detail", "handle_request", "--slow", "25ms"}, 0},
	{"inline", []string{"--detail", "handle_request", "--slow", "25ms"}, 0},
	{"auto", []string{"--detail", "handle_request", "--detail-if", "ret<0"}, 0},
	// Trap probes keep tracer and target busy (two stops a call): alone.
	{"trap", []string{"--detail", "handle_request", "--slow", "25ms"}, 1},
}

// memResult is what one memory run measured.
type memResult struct {
	run        memRun
	err        error
	early, end int64 // VmRSS kB at memEarly and at the end (-detail-for)
	// hwm is VmHWM at the last sample: the peak while tracing, before
	// the profile is written.
	hwm                int64
	samples            int
	rounds             int64
	kept, dropped      int64 // detail trees
	calls, ringEvents  int64
	stalls             string
	inlineFns, trapFns string
}

func measureMemory(c config) ([]memResult, error) {
	if c.detailFor <= memEarly {
		return nil, fmt.Errorf("-detail-for %s: must be more than %s", c.detailFor, memEarly)
	}
	out := make([]memResult, len(memRuns))
	for g := 0; ; g++ {
		var wg sync.WaitGroup
		started := 0
		for i, r := range memRuns {
			if r.group != g {
				continue
			}
			started++
			wg.Add(1)
			go func() {
				defer wg.Done()
				out[i] = runMemory(c, i, r)
			}()
		}
		if started == 0 {
			break
		}
		wg.Wait()
	}
	for _, m := range out {
		if m.err != nil {
			fmt.Printf("  %s %s: failed: %v\n", m.run.probes, strings.Join(m.run.flags, " "), m.err)
			continue
		}
		fmt.Printf("  %-6s %-48s RSS %d kB at %s, %d kB at %s (%.3f×), peak %d kB; %d rounds, trees %d kept %d dropped\n",
			m.run.probes, strings.Join(m.run.flags, " "), m.early, durLabel(memEarly), m.end, durLabel(c.detailFor),
			float64(m.end)/float64(m.early), m.hwm, m.rounds, m.kept, m.dropped)
	}
	return out, nil
}

// runMemory runs one memory run and samples the profiler's memory every
// second while its target lives.
func runMemory(c config, i int, r memRun) memResult {
	m := memResult{run: r}
	requests := filepath.Join(filepath.Dir(c.workload), "requests")
	data := filepath.Join(c.tmp, fmt.Sprintf("detail-mem-%d.data", i))
	secs := strconv.FormatFloat(c.detailFor.Seconds(), 'f', -1, 64)
	argv := append([]string{"record", "--probes", r.probes, "--sample=0", "--stats", "-o", data}, r.flags...)
	cmd := exec.Command(c.profile, append(argv, "--", requests, "1000", secs)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		m.err = err
		return m
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	pid := cmd.Process.Pid
	var waitErr error
	finished := false
	for k := 1; !finished; k++ {
		select {
		case waitErr = <-done:
			finished = true
			continue
		case <-time.After(time.Until(t0.Add(time.Duration(k) * time.Second))):
		}
		at := time.Duration(k) * time.Second
		if !hasChild(pid) {
			continue // the target has exited: the profiler is writing
		}
		rss, hwm, err := procMemory(pid)
		if err != nil {
			continue // it exited between the two reads
		}
		m.samples++
		m.hwm = hwm
		if at == memEarly {
			m.early = rss
		}
		if at == c.detailFor {
			m.end = rss
		}
	}
	if waitErr != nil {
		m.err = fmt.Errorf("%s: %w: %s", strings.Join(cmd.Args, " "), waitErr, lastLine(stderr.String()))
		return m
	}
	if m.early == 0 || m.end == 0 {
		m.err = fmt.Errorf("the target was not running at %s and %s (%d samples)", memEarly, c.detailFor, m.samples)
		return m
	}
	m.err = m.fromOutput(data, stdout.String(), stderr.String())
	return m
}

// fromOutput reads the run's profile (trees kept and dropped), the
// workload's rounds and the engine statistics.
func (m *memResult) fromOutput(data, stdout, stderr string) error {
	p, err := model.ReadFile(data)
	if err != nil {
		return err
	}
	m.kept, m.dropped = countTrees(p)
	m.calls = p.Meta.TracedCalls
	if v := statRE("rounds=").FindStringSubmatch(stdout); v != nil {
		m.rounds, _ = strconv.ParseInt(v[1], 10, 64)
	}
	if v := statRE("ring events:").FindStringSubmatch(stderr); v != nil {
		m.ringEvents, _ = strconv.ParseInt(v[1], 10, 64)
	}
	if v := statRE("inline probes:").FindStringSubmatch(stderr); v != nil {
		m.inlineFns = v[1]
	}
	if v := statRE("trap probes:").FindStringSubmatch(stderr); v != nil {
		m.trapFns = v[1]
	}
	m.stalls = stalls(stderr, 0)
	return nil
}

func statRE(label string) *regexp.Regexp {
	return regexp.MustCompile(regexp.QuoteMeta(label) + `\s*(\d+)`)
}

// hasChild tells whether process pid has a child (its target) running.
func hasChild(pid int) bool {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, t := range tasks {
		if b, err := os.ReadFile(t); err == nil && len(strings.TrimSpace(string(b))) > 0 {
			return true
		}
	}
	return false
}

// procMemory reads VmRSS and VmHWM (kB) of process pid.
func procMemory(pid int) (rss, hwm int64, err error) {
	path := fmt.Sprintf("/proc/%d/status", pid)
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, err
	}
	rss, hwm, err = parseMemory(string(b))
	if err != nil {
		return 0, 0, fmt.Errorf("%s: %w", path, err)
	}
	return rss, hwm, nil
}

// parseMemory reads VmRSS and VmHWM (kB) from the text of a
// /proc/PID/status file.
func parseMemory(status string) (rss, hwm int64, err error) {
	for _, line := range strings.Split(status, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || (f[0] != "VmRSS:" && f[0] != "VmHWM:") {
			continue
		}
		v, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("%s: %w", f[0], err)
		}
		if f[0] == "VmRSS:" {
			rss = v
		} else {
			hwm = v
		}
	}
	if rss == 0 || hwm == 0 {
		return 0, 0, fmt.Errorf("no VmRSS or VmHWM")
	}
	return rss, hwm, nil
}

// memTable is the memory rows' table with the acceptance per run.
func memTable(c config, ms []memResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Memory: `profile record --probes P --detail handle_request ... -- requests 1000 %s`, the profiler's VmRSS "+
		"(`/proc/PID/status`) sampled every second while its target runs; one run each, unpinned; "+
		"the first three at the same time, the trap run alone.\n\n", strconv.FormatFloat(c.detailFor.Seconds(), 'f', -1, 64))
	fmt.Fprintf(&b, "| probes | rule | rounds | trees kept / dropped | RSS at %s | RSS at %s | ratio | peak while tracing (VmHWM) | goal: within 10%% |\n",
		durLabel(memEarly), durLabel(c.detailFor))
	b.WriteString("|---|---|---|---|---|---|---|---|---|\n")
	for _, m := range ms {
		rule := "`" + strings.Join(m.run.flags[2:], " ") + "`"
		if m.err != nil {
			fmt.Fprintf(&b, "| %s | %s | n/a (%v) | | | | | | |\n", m.run.probes, rule, m.err)
			continue
		}
		rt := float64(m.end) / float64(m.early)
		fmt.Fprintf(&b, "| %s | %s | %d | %d / %d | %s | %s | %.3f× | %s | %s |\n", m.run.probes, rule, m.rounds,
			m.kept, m.dropped, mib(m.early), mib(m.end), rt, mib(m.hwm), metOrNot(memGoal(m.early, m.end)))
	}
	b.WriteString("\n")
	for _, m := range ms {
		if m.err != nil {
			continue
		}
		fmt.Fprintf(&b, "- %s `%s`: %d traced calls, %s ring events, probes %s inline / %s trap, %s\n", m.run.probes,
			strings.Join(m.run.flags[2:], " "), m.calls, strconv.FormatInt(m.ringEvents, 10), orNA(m.inlineFns), orNA(m.trapFns), orNA(m.stalls))
	}
	return b.String()
}

// memGoal is issue #12's memory acceptance: the RSS at the end at most
// 10% above the RSS at memEarly.
func memGoal(early, end int64) bool { return early > 0 && 10*end <= 11*early }

// mib formats kB as MiB.
func mib(kb int64) string {
	return fmt.Sprintf("%.1f MiB", float64(kb)/1024)
}
