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

	"github.com/profile-dev/profile/model"
)

type config struct {
	profile, workload, out string
	iterations, runs       int
}

type setting struct {
	name   string
	prefix []string
}

type result struct {
	untraced, profiled, ltraced time.Duration
	calls                       int64
	stop                        time.Duration
	ltraceOK                    bool
}

func main() {
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
	tmp, err := os.MkdirTemp("", "bench-")
	if err != nil {
		return r, err
	}
	defer os.RemoveAll(tmp)
	n := strconv.Itoa(c.iterations)
	data := filepath.Join(tmp, "b.data")
	var err2 error
	r.untraced, err2 = median(c.runs, s.prefix, c.workload, n)
	if err2 != nil {
		return r, err2
	}
	var stops []time.Duration
	r.profiled, err = medianWith(c.runs, func() (time.Duration, error) {
		os.Remove(data)
		d, err := timed(s.prefix, c.profile, "record", "-o", data, "--", c.workload, n)
		if err != nil {
			return 0, err
		}
		p, err := model.ReadFile(data)
		if err != nil {
			return 0, err
		}
		r.calls = p.Meta.TracedCalls
		stops = append(stops, time.Duration(p.Meta.StopOverheadNs))
		return d, nil
	})
	if err != nil {
		return r, err
	}
	r.stop = medianOf(stops)
	if _, err := exec.LookPath("ltrace"); err == nil {
		r.ltraced, err = median(c.runs, s.prefix, "ltrace", "-L", "-o", "/dev/null",
			"-x", "main@MAIN+run@MAIN+rec@MAIN+leaf@MAIN", c.workload, n)
		r.ltraceOK = err == nil
	}
	return r, nil
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

func row(s setting, r result) string {
	perCall := (r.profiled - r.untraced) / time.Duration(max(r.calls, 1))
	lt, ratio := "n/a", "n/a"
	if r.ltraceOK {
		ltPer := (r.ltraced - r.untraced) / time.Duration(max(r.calls, 1))
		lt = us(ltPer)
		ratio = fmt.Sprintf("%.1f×", float64(ltPer)/float64(perCall))
	}
	floor := 2 * r.stop
	return fmt.Sprintf("| %s | %d | %s | %s | %s | %s | %s | %s | %s | %.2f× |", s.name, r.calls,
		r.untraced.Round(time.Millisecond), r.profiled.Round(time.Millisecond), us(perCall),
		lt, ratio, us(r.stop), us(floor), float64(perCall)/float64(max(floor, 1)))
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
	fmt.Fprintf(&b, "Workload (a): `%s %d` (%d traced functions: main, run, rec, leaf), %d runs each, medians; %s, %s, %s.\n\n",
		filepath.Base(c.workload), c.iterations, 4, c.runs, time.Now().UTC().Format("2006-01-02"), host, cpu)
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
