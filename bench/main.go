// Command bench measures the per-call overhead of tracing workload (a)
// (testdata recursion) in one run, pinned to one CPU and unpinned:
// untraced, `profile record` and `profile attach` with trap and inline
// probes, ltrace, and uftrace (dynamic patching and a -pg build), against
// the bare ptrace stop measured in the same run. It writes the medians into
// docs/benchmarks.md between the engine and probes markers. Then the live
// rows (profile top) and the detail rows (record --detail: per call and
// memory over a long run), each into its own section. Run it with `make
// bench`; -live-only, -detail-only and -accuracy-only run one part alone.
// The accuracy rows (accuracy.go) are how close compensated times come to
// the truth: relations that hold on a quiet machine only, measured here
// rather than asserted by tests. The fidelity rows (fidelity.go) compare
// the profile's self-time shares with perf sampling the untraced program;
// -fidelity-of runs that check on any command (fidelity_of.go).
//
// Files: main.go (flags, the run), jobs.go (timed runs, medians),
// record.go (profile record and ltrace), uftrace.go, attach.go,
// floor.go (the bare stop), report.go (the tables and the document),
// live.go, detail.go with detailcost.go and detailmem.go.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/profile-dev/profile/attach"
	"github.com/profile-dev/profile/internal/hostinfo"
)

type config struct {
	profile, workload, out string
	iterations, runs       int
	detailRuns             int // rounds of the detail per-call rows
	// inlineN is the size of the runs of cheap tracers (inline probes,
	// uftrace): large enough that their cost is well above start-up noise.
	inlineN int
	// attachShort and attachLong are the two --duration values of the
	// attach rows; attachDelay is how long the target runs before.
	attachShort, attachLong, attachDelay time.Duration

	liveOnly     bool // only the live rows
	accuracyOnly bool // only the compensation accuracy rows
	fidelityOnly bool // only the fidelity rows (against perf)
	autoOnly     bool // only the probe choice rows (auto against inline)
	processOnly  bool // only the processes rows (workloads that start many)
	// fidelityOf: a command to check against perf alone (fidelity_of.go),
	// the module whose functions are compared, the profile's flags.
	fidelityOf, fidelityModule, fidelityFlags string

	detailOnly bool          // only the detail rows
	detailFor  time.Duration // the detail memory runs' length

	tmp      string // scratch directory of this run
	int3loop string // the floor's target
	pgBinary string // the workload built with -pg, "" if the build failed
	pgError  string // why there is no -pg build
}

type setting struct {
	name   string
	prefix []string
}

var settings = []setting{
	{"pinned to CPU 0", []string{"taskset", "-c", "0"}},
	{"unpinned", nil},
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
	flag.IntVar(&c.iterations, "n", 1000, "workload iterations for the trap and ltrace rows (12 traced calls each)")
	flag.IntVar(&c.inlineN, "n-inline", 500000, "workload iterations for the inline and uftrace rows")
	flag.IntVar(&c.runs, "runs", 5, "runs per measurement (the median is reported)")
	flag.IntVar(&c.detailRuns, "detail-runs", 9, "rounds of the detail per-call rows (the median of the rounds' ratios is reported)")
	flag.DurationVar(&c.attachShort, "attach-short", 500*time.Millisecond, "the shorter attach duration")
	flag.DurationVar(&c.attachLong, "attach-long", 2500*time.Millisecond, "the longer attach duration")
	flag.DurationVar(&c.attachDelay, "attach-delay", 300*time.Millisecond, "how long the target runs before attaching")
	flag.BoolVar(&c.liveOnly, "live-only", false, "measure only the live rows (profile top against attach)")
	flag.BoolVar(&c.accuracyOnly, "accuracy-only", false, "measure only the compensation accuracy rows (trap stops, inline shares)")
	flag.BoolVar(&c.fidelityOnly, "fidelity-only", false, "measure only the fidelity rows (self-time shares against perf sampling the untraced Lua driver)")
	flag.StringVar(&c.fidelityOf, "fidelity-of", "", "only check this command's self-time shares against perf's (printed, not written)")
	flag.StringVar(&c.fidelityModule, "fidelity-module", "", "with -fidelity-of: the module (path) whose functions are compared; default the command's executable")
	flag.StringVar(&c.fidelityFlags, "fidelity-flags", "", "with -fidelity-of: profile record's flags (e.g. --lib libpython3.11.so.1.0)")
	flag.BoolVar(&c.autoOnly, "auto-only", false, "measure only the probe choice rows (--probes auto against inline on the Lua driver, vcall and redis-server)")
	flag.BoolVar(&c.processOnly, "processes-only", false, "measure only the processes rows (a shell loop of /bin/true, gcc compiling a small file: untraced against profile record)")
	flag.BoolVar(&c.detailOnly, "detail-only", false, "measure only the detail rows (record --detail: per call, memory)")
	flag.DurationVar(&c.detailFor, "detail-for", 60*time.Second, "how long the detail memory runs trace (whole seconds, over 10s)")
	flag.Parse()
	if n := btoi(c.liveOnly) + btoi(c.detailOnly) + btoi(c.accuracyOnly) + btoi(c.fidelityOnly) + btoi(c.autoOnly) + btoi(c.processOnly); n > 1 {
		fmt.Fprintln(os.Stderr, "bench: -live-only, -detail-only, -accuracy-only, -fidelity-only, -auto-only and -processes-only exclude each other")
		os.Exit(2)
	}
	if c.detailFor <= memEarly || c.detailFor%time.Second != 0 {
		fmt.Fprintf(os.Stderr, "bench: -detail-for %s: want whole seconds over %s\n", c.detailFor, memEarly)
		os.Exit(2)
	}
	if err := run(c); err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		os.Exit(1)
	}
}

// sectionsOf names the document's sections a run of config c writes.
func sectionsOf(c config) []string {
	switch {
	case c.liveOnly:
		return []string{"live"}
	case c.accuracyOnly:
		return []string{"accuracy"}
	case c.fidelityOnly:
		return []string{"fidelity"}
	case c.autoOnly:
		return []string{"auto"}
	case c.detailOnly:
		return []string{"detail"}
	case c.processOnly:
		return []string{"processes"}
	}
	return []string{"engine", "probes", "live", "detail", "accuracy", "fidelity", "auto", "processes"}
}

func run(c config) error {
	for _, p := range []*string{&c.profile, &c.workload} {
		abs, err := filepath.Abs(*p)
		if err != nil {
			return err
		}
		*p = abs
	}
	if err := checkSections(c.out, sectionsOf(c)...); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	c.tmp = tmp
	// The plan cache is the run's own: a session's later runs read what
	// its first planned, as a user's later sessions do (the processes rows
	// measure without it too).
	os.Setenv(planCacheEnv, filepath.Join(tmp, "plans"))
	c.int3loop = filepath.Join(tmp, "int3loop")
	if out, err := exec.Command("gcc", "-O2", "-o", c.int3loop, "bench/testdata/int3loop.c").CombinedOutput(); err != nil {
		return fmt.Errorf("build int3loop: %v: %s", err, out)
	}
	loadStart := loadAverage()
	fmt.Printf("%s, %s, load average %s\n", hostName(), hostinfo.CPUModel(), loadStart)
	if c.liveOnly {
		fmt.Println("live:")
		live := rounds(c.runs, liveJobs(c))
		loadEnd := loadAverage()
		when := whenLine(loadStart, loadEnd)
		fmt.Print(liveTable(c, live, when))
		return writeSections(c.out, []section{liveSection(c, live, when)})
	}
	if c.accuracyOnly {
		acc, err := measureAccuracy(c)
		if err != nil {
			return err
		}
		return writeSections(c.out, []section{accuracySection(acc, whenLine(loadStart, loadAverage()))})
	}
	if c.fidelityOf != "" {
		return measureFidelityOf(c)
	}
	if c.fidelityOnly {
		fid, err := measureFidelity(c)
		if err != nil {
			return err
		}
		return writeSections(c.out, []section{fidelitySection(fid, whenLine(loadStart, loadAverage()))})
	}
	if c.autoOnly {
		auto, err := measureAuto(c)
		if err != nil {
			return err
		}
		return writeSections(c.out, []section{autoSection(auto, whenLine(loadStart, loadAverage()))})
	}
	if c.processOnly {
		procs, err := measureProcesses(c)
		if err != nil {
			return err
		}
		return writeSections(c.out, []section{processesSection(procs, whenLine(loadStart, loadAverage()))})
	}
	if c.detailOnly {
		det, err := measureDetail(c)
		if err != nil {
			return err
		}
		return writeSections(c.out, []section{detailSection(c, det, whenLine(loadStart, loadAverage()))})
	}
	c.pgBinary, c.pgError = buildPG(c)
	var results []settingResult
	for _, s := range settings {
		fmt.Printf("%s:\n", s.name)
		r, err := measure(c, s)
		if err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		fmt.Println(trapRow(s, r.trap))
		results = append(results, r)
	}
	fmt.Println("live:")
	live := rounds(c.runs, liveJobs(c))
	det, err := measureDetail(c)
	if err != nil {
		return err
	}
	acc, err := measureAccuracy(c)
	if err != nil {
		return err
	}
	fid, err := measureFidelity(c)
	if err != nil {
		return err
	}
	auto, err := measureAuto(c)
	if err != nil {
		return err
	}
	procs, err := measureProcesses(c)
	if err != nil {
		return err
	}
	loadEnd := loadAverage()
	fmt.Printf("load average %s\n", loadEnd)
	fmt.Print(probeTable(c, results))
	if err := update(c, results, live, det, loadStart, loadEnd); err != nil {
		return err
	}
	return writeSections(c.out, []section{accuracySection(acc, whenLine(loadStart, loadEnd)),
		fidelitySection(fid, whenLine(loadStart, loadEnd)), autoSection(auto, whenLine(loadStart, loadEnd)),
		processesSection(procs, whenLine(loadStart, loadEnd))})
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// settingResult is everything measured under one CPU setting.
type settingResult struct {
	trap   trapResult          // the trap table (profile record --probes trap, ltrace)
	rows   map[string]overhead // the probes table, by row key
	floor  time.Duration       // one bare stop
	stalls map[string]string   // inline rows: ring stalls from --stats
}

// measure runs every job of one CPU setting round-robin (so that a change
// of the machine's load hits every row alike), then the floor.
func measure(c config, s setting) (settingResult, error) {
	var js []job
	js = append(js, recordJobs(c, s)...)
	js = append(js, uftraceJobs(c, s)...)
	js = append(js, attachJobs(c, s)...)
	res := rounds(c.runs, js)
	if err := res.required("untraced n", "untraced 0", "untraced N", "trap n", "trap 0", "inline N", "inline 0"); err != nil {
		return settingResult{}, err
	}
	r := settingResult{rows: map[string]overhead{}, stalls: map[string]string{}}
	var err error
	if r.floor, err = floor(c, s); err != nil {
		return r, err
	}
	r.trap = trapFrom(res, r.floor)
	recordRows(res, r)
	uftraceRows(c, res, r)
	attachRows(c, res, r)
	return r, nil
}
