// Command bench measures the engine's per-call overhead on workload (a)
// (testdata recursion) against ltrace and an untraced run, pinned to one
// CPU and unpinned, and writes the medians into docs/benchmarks.md between
// the engine markers. Run it with `make bench`.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/profile-dev/profile/attach"
	"github.com/profile-dev/profile/model"
)

type config struct {
	profile, workload, out string
	int3loop               string
	iterations, runs       int
}

type setting struct {
	name   string
	prefix []string
}

// result holds the medians at the full size and at size 0 (start-up
// and exit only): per-call costs are the differences between the two, so
// fixed costs (loading symbols, writing the profile) do not count.
type result struct {
	untraced, profiled, ltraced    time.Duration
	untraced0, profiled0, ltraced0 time.Duration
	calls, calls0                  int64
	stop                           time.Duration // the engine's own start-up measurement
	floor                          time.Duration // one bare stop, steady state
	ltraceOK                       bool
}

func main() {
	if len(os.Args) == 4 && os.Args[1] == "-floor" {
		// Child mode: measure the stop floor under the caller's CPU setting.
		n, _ := strconv.Atoi(os.Args[3])
		d, err := attach.StopFloor(os.Args[2], n)
		if err != nil {
			fmt.Fprintf(os.Stderr, "bench: floor: %v\n", err)
			os.Exit(1)
		}
		fmt.Println(int64(d))
		return
	}
	var c config
	flag.StringVar(&c.profile, "profile", "./profile", "the profile binary")
	flag.StringVar(&c.workload, "workload", "testdata/bin/recursion", "workload (a)")
	flag.StringVar(&c.out, "o", "docs/benchmarks.md", "the document to update")
	flag.IntVar(&c.iterations, "n", 1000, "workload iterations (12 traced calls each)")
	flag.IntVar(&c.runs, "runs", 5, "runs per measurement (the median is reported)")
	flag.Parse()
	if err := run(c); err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		os.Exit(1)
	}
}

func run(c config) error {
	tmp, err := os.MkdirTemp("", "bench-floor-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	c.int3loop = filepath.Join(tmp, "int3loop")
	if out, err := exec.Command("gcc", "-O2", "-o", c.int3loop, "bench/testdata/int3loop.c").CombinedOutput(); err != nil {
		return fmt.Errorf("build int3loop: %v: %s", err, out)
	}
	settings := []setting{{"pinned to CPU 0", []string{"taskset", "-c", "0"}}, {"unpinned", nil}}
	var rows []string
	for _, s := range settings {
		r, err := measure(c, s)
		if err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		rows = append(rows, row(s, r))
		fmt.Println(row(s, r))
	}
	return update(c, rows)
}

func measure(c config, s setting) (result, error) {
	var r result
	var err error
	if err = sample(c, s, strconv.Itoa(c.iterations), &r.untraced, &r.profiled, &r.ltraced, &r.calls, &r.stop, &r.ltraceOK); err != nil {
		return r, err
	}
	var stop0 time.Duration
	if err = sample(c, s, "0", &r.untraced0, &r.profiled0, &r.ltraced0, &r.calls0, &stop0, &r.ltraceOK); err != nil {
		return r, err
	}
	r.floor, err = floor(c, s)
	return r, err
}

// floor measures one bare stop (median of the runs, 20000 stops each) in
// a child under the same CPU setting.
func floor(c config, s setting) (time.Duration, error) {
	self, err := os.Executable()
	if err != nil {
		return 0, err
	}
	var ds []time.Duration
	for i := 0; i < c.runs; i++ {
		argv := append(append([]string{}, s.prefix...), self, "-floor", c.int3loop, "20000")
		out, err := exec.Command(argv[0], argv[1:]...).Output()
		if err != nil {
			return 0, fmt.Errorf("floor: %w", err)
		}
		ns, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
		if err != nil {
			return 0, err
		}
		ds = append(ds, time.Duration(ns))
	}
	return medianOf(ds), nil
}

// sample takes the medians of one workload size.
func sample(c config, s setting, n string, untraced, profiled, ltraced *time.Duration, calls *int64, stop *time.Duration, ltraceOK *bool) error {
	tmp, err := os.MkdirTemp("", "bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	data := filepath.Join(tmp, "b.data")
	if *untraced, err = median(c.runs, s.prefix, c.workload, n); err != nil {
		return err
	}
	var stops []time.Duration
	*profiled, err = medianWith(c.runs, func() (time.Duration, error) {
		os.Remove(data)
		d, err := timed(s.prefix, c.profile, "record", "-o", data, "--", c.workload, n)
		if err != nil {
			return 0, err
		}
		p, err := model.ReadFile(data)
		if err != nil {
			return 0, err
		}
		*calls = p.Meta.TracedCalls
		stops = append(stops, time.Duration(p.Meta.StopOverheadNs))
		return d, nil
	})
	if err != nil {
		return err
	}
	*stop = medianOf(stops)
	if _, err := exec.LookPath("ltrace"); err == nil {
		*ltraced, err = median(c.runs, s.prefix, "ltrace", "-L", "-o", "/dev/null",
			"-x", "main@MAIN+run@MAIN+rec@MAIN+leaf@MAIN", c.workload, n)
		*ltraceOK = err == nil
	}
	return nil
}

// timed runs a command with stdout discarded and returns its wall time.
func timed(prefix []string, args ...string) (time.Duration, error) {
	argv := append(append([]string{}, prefix...), args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	t0 := time.Now()
	err := cmd.Run()
	wall := time.Since(t0)
	if err != nil {
		return 0, fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, errb.String())
	}
	return wall, nil
}

func median(runs int, prefix []string, args ...string) (time.Duration, error) {
	return medianWith(runs, func() (time.Duration, error) { return timed(prefix, args...) })
}

func medianWith(runs int, f func() (time.Duration, error)) (time.Duration, error) {
	var ds []time.Duration
	for i := 0; i < runs; i++ {
		d, err := f()
		if err != nil {
			return 0, err
		}
		ds = append(ds, d)
	}
	return medianOf(ds), nil
}

func medianOf(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func us(d time.Duration) string { return fmt.Sprintf("%.1f µs", float64(d)/1e3) }

// perCall is the marginal cost per traced call of a traced run.
func perCall(traced, traced0 time.Duration, r result) time.Duration {
	extra := (traced - traced0) - (r.untraced - r.untraced0)
	return extra / time.Duration(max(r.calls-r.calls0, 1))
}

func row(s setting, r result) string {
	pc := perCall(r.profiled, r.profiled0, r)
	lt, ratio := "n/a", "n/a"
	if r.ltraceOK {
		ltPer := perCall(r.ltraced, r.ltraced0, r)
		lt = us(ltPer)
		ratio = fmt.Sprintf("%.1f×", float64(ltPer)/float64(pc))
	}
	floor := 2 * r.floor
	return fmt.Sprintf("| %s | %d | %s | %s | %s | %s | %s | %s | %s | %.2f× |", s.name, r.calls,
		r.untraced.Round(time.Millisecond), r.profiled.Round(time.Millisecond), us(pc),
		lt, ratio, us(r.floor), us(floor), float64(pc)/float64(max(floor, 1)))
}

const (
	begin = "<!-- engine:begin -->"
	end   = "<!-- engine:end -->"
)

func update(c config, rows []string) error {
	host, _ := os.Hostname()
	cpu := cpuModel()
	var b strings.Builder
	b.WriteString(begin + "\n")
	fmt.Fprintf(&b, "Workload (a): `%s %d` (traced: main, run, rec, leaf and the default libc set), %d runs each, medians; "+
		"per-call figures are marginal: the same runs at size 0 are subtracted, so start-up and writing the profile do not count. %s, %s, %s.\n\n",
		filepath.Base(c.workload), c.iterations, c.runs, time.Now().UTC().Format("2006-01-02"), host, cpu)
	b.WriteString("| setting | traced calls | untraced | `profile record` | profile per call | `ltrace -L -x` per call | ltrace / profile | one bare stop | two stops (floor) | profile / floor |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		b.WriteString(r + "\n")
	}
	b.WriteString(end)
	doc, err := os.ReadFile(c.out)
	if err != nil {
		return err
	}
	s := string(doc)
	i, j := strings.Index(s, begin), strings.Index(s, end)
	if i < 0 || j < i {
		return fmt.Errorf("%s: no %s ... %s markers", c.out, begin, end)
	}
	s = s[:i] + b.String() + s[j+len(end):]
	return os.WriteFile(c.out, []byte(s), 0o644)
}

func cpuModel() string {
	b, _ := os.ReadFile("/proc/cpuinfo")
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "model name"); ok {
			return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":")) + fmt.Sprintf(" (%d CPUs)", countCPUs(string(b)))
		}
	}
	return "unknown CPU"
}

func countCPUs(cpuinfo string) int { return strings.Count(cpuinfo, "processor\t:") }
