package cmd

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"

	"github.com/profile-dev/profile/attach"
	"github.com/profile-dev/profile/detail"
	"github.com/profile-dev/profile/instrument"
	"github.com/profile-dev/profile/model"
)

// traceFlags are the flags record and attach share.
type traceFlags struct {
	out          string
	filters      []string
	excludes     []string
	libs         []string
	debugDir     string // --debug-dir DIR (debugdir.go)
	noFollowFork bool
	force        bool
	stats        bool
	probes       string
	noCompensate bool
	duration     time.Duration
	checkpoint   string
	snapEvery    time.Duration
	detail       string
	slow         time.Duration
	detailIf     string
	detailLimit  int
	counted      string         // --counted REGEX (record and attach)
	sample       time.Duration  // --sample D (record and attach)
	timed        string         // --timed REGEX (record and attach)
	expand       []string       // --expand FUNC (expand.go)
	expandDepth  int            // --depth N; 0: not given (1)
	context      string         // --context A>B (expand.go)
	autoExpand   int            // --auto-expand N (expand.go)
	interval     time.Duration  // --interval D
	saved        bool           // the output was written once already this session
	kept         string         // the file a save of this session was kept in instead (keep.go)
	stdout       io.Writer      // standard output, for -o - (attach)
	snaps        *snapshotFiles // the snapshots' writer
}

// save writes the profile to -o or, when that fails, keeps it aside
// (keep.go): it returns where it went ("" for nowhere) and, unless that
// is -o, a *keptError saying why and where. The first write of a session
// keeps an existing file as .old, later ones (after a crash snapshot)
// replace it, as they replace the file an earlier save was kept in.
func (f *traceFlags) save(p *model.Profile) (string, error) {
	stdout := f.stdout
	if stdout == nil {
		stdout = os.Stdout
	}
	at, err := saveOrKeep(stdout, f.out, !f.saved, f.kept, p)
	switch {
	case err == nil:
		f.saved = true
	case at != "":
		f.kept = at
	}
	return at, err
}

// validate checks the flags before tracing starts: a bad value is a usage
// error, and an unwritable output must not cost the trace at the end.
// -o - (standard output) is not for record: its program owns standard
// output.
func (f *traceFlags) validate(mode string) error {
	if f.duration < 0 {
		return usagef("--duration must be positive, not %s", f.duration)
	}
	if f.snapEvery < 0 {
		return usagef("--snapshot-every must be positive, not %s", f.snapEvery)
	}
	if f.detail == "" && (f.slow != 0 || f.detailIf != "") {
		return usagef("--slow and --detail-if choose among the calls of --detail REGEX: give --detail")
	}
	if f.slow < 0 {
		return usagef("--slow must be positive, not %s", f.slow)
	}
	if f.detailLimit < 1 {
		return usagef("--detail-limit must be at least 1, not %d", f.detailLimit)
	}
	if err := attach.CheckProbes(f.probes); err != nil {
		return usagef("--probes: %v", err)
	}
	if f.out == stdoutPath {
		switch {
		case mode == "record":
			return usagef("-o -: the traced program writes to the standard output (it inherits it): give -o FILE")
		case f.snapshotting():
			return usagef("--checkpoint and --snapshot-every write FILE.1, FILE.2, ... beside -o FILE: give -o FILE, not -o -")
		}
		return nil
	}
	if err := checkOutput(f.out); err != nil {
		return err
	}
	if f.snapshotting() && isDevice(f.out) {
		return usagef("--checkpoint and --snapshot-every write FILE.1, FILE.2, ... beside -o FILE: give -o FILE, not a device")
	}
	return nil
}

func (f *traceFlags) register(c *cobra.Command) {
	fl := c.Flags()
	fl.StringVarP(&f.out, "output", "o", "profile.data", "write the profile to `FILE` (an existing one is kept as FILE.old; a device such as /dev/null is written straight)")
	fl.StringArrayVar(&f.filters, "filter", nil, "trace only functions whose module:function matches `REGEX` (repeatable)")
	fl.StringArrayVar(&f.excludes, "exclude", nil, "do not trace functions whose module:function matches `REGEX` (repeatable)")
	fl.StringArrayVar(&f.libs, "lib", nil, "also trace every function of the library `NAME` (repeatable)")
	fl.BoolVar(&f.noFollowFork, "no-follow-fork", false, "do not trace forked children")
	fl.BoolVar(&f.force, "force", false, "trace programs that are refused otherwise (Go programs: counts may be wrong)")
	fl.BoolVar(&f.stats, "stats", false, "print engine statistics when done")
	fl.StringVar(&f.probes, "probes", attach.ProbesAuto, "probe `KIND`: auto (inline where a function can be patched safely, else trap), inline or trap")
	fl.BoolVar(&f.noCompensate, "no-compensate", false, "keep the probes' own cost in the times (measured per call at start and taken out by default)")
	fl.DurationVar(&f.duration, "duration", 0, "stop tracing after `D` (e.g. 10s)")
	fl.StringVar(&f.checkpoint, "checkpoint", "", "write a snapshot FILE.1, FILE.2, ... each time `FUNC` returns (at most one a second; SIGUSR1 writes one too)")
	fl.DurationVar(&f.snapEvery, "snapshot-every", 0, "write a snapshot FILE.1, FILE.2, ... every `D`, tracing on")
	fl.StringVar(&f.detail, "detail", "", "record in detail (times, arguments, return value, ancestors) the calls of functions matching `REGEX`; see profile trees")
	fl.DurationVar(&f.slow, "slow", 0, "with --detail, keep only calls that lasted at least `D` (e.g. 10ms)")
	fl.StringVar(&f.detailIf, "detail-if", "", "with --detail, keep only calls where `EXPR` holds: ret or arg0-arg5, == != < <= > >=, an integer (e.g. 'ret<0'; /i64 /u64 /u32 after the register to read it so, int by default)")
	fl.IntVar(&f.detailLimit, "detail-limit", 1000, "with --detail, keep at most `N` trees per thread, dropping the oldest")
	fl.StringArrayVar(&f.expand, "expand", nil, "also trace `FUNC` and the functions it can call, found in its code (repeatable; see profile discover)")
	fl.IntVar(&f.expandDepth, "depth", 1, "with --expand or --auto-expand, follow callees `N` levels down")
	fl.StringVar(&f.context, "context", "", "with --expand, record FUNC's callees only while `CONTEXT` (A>B: function A, then B deeper) is on the thread's stack")
	registerDebugDir(c, &f.debugDir)
}

// defaultSample is --sample's default: perf's 4,000 samples a second of
// CPU time. Busy times are sampled unless asked otherwise.
const defaultSample = 250 * time.Microsecond

// registerCounted adds --counted and --sample (record and attach: top
// shows measured times).
func (f *traceFlags) registerCounted(c *cobra.Command) {
	c.Flags().StringVar(&f.counted, "counted", "", "count, not time, the calls of traced functions matching `REGEX` (name or module:name): exact calls per caller for some 7 ns a call, their time left in their callers' self time")
	c.Flags().DurationVar(&f.sample, "sample", defaultSample, "sample each traced thread's CPU every `D` of its CPU time (perf_event_open) and take busy times from the samples, each given to the call running then; functions whose calls are too short to time move to counting; 0: measure times, every function timed")
	c.Flags().StringVar(&f.timed, "timed", "", "with CPU samples (the default), keep the functions matching `REGEX` (name or module:name) timed however short their calls")
}

// registerAutoExpand adds --auto-expand and --interval (record and
// attach: top's --interval is its refresh).
func (f *traceFlags) registerAutoExpand(c *cobra.Command) {
	fl := c.Flags()
	fl.IntVar(&f.autoExpand, "auto-expand", 0, "every --interval, trace the callees of the `N` functions with the most self time so far (found in their code, as --expand does)")
	fl.DurationVar(&f.interval, "interval", time.Second, "with --auto-expand, how often to look (`D`, e.g. 500ms)")
}

// snapshotting tells whether snapshots are asked for by a flag (SIGUSR1
// can always ask).
func (f *traceFlags) snapshotting() bool { return f.checkpoint != "" || f.snapEvery > 0 }

// options are the engine's options for record (command) or attach and
// top (pid).
func (f *traceFlags) options(mode string, command []string, pid int) (attach.Options, error) {
	if err := f.validate(mode); err != nil {
		return attach.Options{}, err
	}
	filter, err := instrument.NewFilter(f.filters, f.excludes, f.libs)
	if err != nil {
		return attach.Options{}, &usageError{err}
	}
	opt := attach.Options{
		Filter:       filter,
		Debug:        debugSearch(f.debugDir, os.Stderr),
		PlanCache:    planCacheDir(),
		NoFollowFork: f.noFollowFork,
		Force:        f.force,
		Probes:       f.probes,
		Compensate:   !f.noCompensate,
		Meta: model.Meta{ToolVersion: Version, Mode: mode, Command: command,
			Filters: f.filters, Excludes: f.excludes, Libs: f.libs},
	}
	if err := f.detailOptions(&opt); err != nil {
		return attach.Options{}, err
	}
	if f.counted != "" {
		if f.probes == attach.ProbesTrap {
			return attach.Options{}, usagef("--counted takes inline probes: not with --probes trap")
		}
		re, err := regexp.Compile(f.counted)
		if err != nil {
			return attach.Options{}, usagef("--counted: %v", err)
		}
		opt.Counted = re
	}
	if f.sample < 0 || f.sample > 0 && f.sample < 10*time.Microsecond {
		return attach.Options{}, usagef("--sample must be at least 10us, not %s", f.sample)
	}
	opt.SamplePeriod = f.sample
	if err := f.timedOptions(&opt); err != nil {
		return attach.Options{}, err
	}
	if err := f.expandOptions(&opt, command, pid, os.Stderr); err != nil {
		return attach.Options{}, err
	}
	if err := f.autoExpandOptions(&opt, os.Stderr); err != nil {
		return attach.Options{}, err
	}
	if isatty.IsTerminal(os.Stderr.Fd()) {
		opt.Live.Progress = progressLine(os.Stderr)
	}
	opt.Live.OnCrash = func(p *model.Profile) {
		// Saved before the crash goes through, in case nothing else is;
		// but standard output or a device takes one profile: the final one.
		if isStream(f.out) {
			return
		}
		if _, err := f.save(p); err != nil {
			fmt.Fprintf(os.Stderr, "profile: %v\n", err)
		}
	}
	// Told before tracing, not after, when the output's disk is nearly full.
	warnLowSpace(os.Stderr, f.out)
	return opt, nil
}

// detailOptions reads --detail, --slow, --detail-if and --detail-limit.
func (f *traceFlags) detailOptions(opt *attach.Options) error {
	if f.detail == "" {
		return nil
	}
	re, err := regexp.Compile(f.detail)
	if err != nil {
		return usagef("--detail: %v", err)
	}
	opt.Detail.Funcs = re
	opt.Detail.Rule = detail.Rule{SlowNs: int64(f.slow), Limit: f.detailLimit}
	if f.detailIf != "" {
		c, err := detail.ParseCond(f.detailIf)
		if err != nil {
			return usagef("--detail-if: %v", err)
		}
		opt.Detail.Rule.If = &c
	}
	return nil
}

// traceContext ends on the given signals or after the duration. A second
// signal while detaching is swallowed: the target is never abandoned with
// breakpoints in it.
func (f *traceFlags) traceContext(sigs ...os.Signal) (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 4)
	signal.Notify(ch, sigs...)
	go func() {
		for range ch {
			cancel()
		}
	}()
	if f.duration > 0 {
		var c2 context.CancelFunc
		ctx, c2 = context.WithTimeout(ctx, f.duration)
		prev := cancel
		cancel = func() { c2(); prev() }
	}
	return ctx, func() { signal.Stop(ch); cancel() }
}

// progressLine draws one live status line on a terminal.
func progressLine(w io.Writer) func(attach.Stats) {
	var lastCalls int64
	var lastAt time.Duration
	return func(s attach.Stats) {
		rate := 0.0
		if dt := s.Elapsed - lastAt; dt > 0 {
			rate = float64(s.TracedCalls-lastCalls) / dt.Seconds()
		}
		lastCalls, lastAt = s.TracedCalls, s.Elapsed
		fmt.Fprintf(w, "\r\033[K%s  %d calls  %.0f calls/s  %d threads  %d processes  probes %d inline %d trap",
			s.Elapsed.Truncate(100*time.Millisecond), s.TracedCalls, rate, s.Threads, s.Processes,
			s.Probes.Inline, s.Probes.Trap)
	}
}

// finishTrace writes the profile and the statistics of a session. A
// profile kept aside (keep.go) is said in one line on stderr; the error
// returned, when it could be written nowhere, says why.
func (f *traceFlags) finishTrace(c *cobra.Command, r *attach.Result) error {
	f.snaps.close()
	if isatty.IsTerminal(os.Stderr.Fd()) {
		fmt.Fprint(os.Stderr, "\r\033[K")
	}
	stderr := c.ErrOrStderr()
	at, err := f.save(r.Profile)
	if f.stats {
		writeStats(stderr, r.Stats)
		if r.Profile != nil {
			writeNotInline(stderr, r.Profile, "functions without an inline probe", 20)
		}
	}
	if at == "" {
		return err
	}
	if err != nil {
		fmt.Fprintf(stderr, "profile: %v\n", err)
	}
	fmt.Fprintf(stderr, "profile: wrote %s (%d calls, %d threads, %d processes)\n",
		outName(at), r.Stats.TracedCalls, r.Stats.AllThreads, r.Stats.Processes)
	return nil
}

func writeStats(w io.Writer, s attach.Stats) {
	perCall := 0.0
	if s.TracedCalls > 0 {
		perCall = float64(s.Stops) / float64(s.TracedCalls)
	}
	perSec := 0.0
	if s.Elapsed > 0 {
		perSec = float64(s.Stops) / s.Elapsed.Seconds()
	}
	fmt.Fprintf(w, "stops:               %d\n", s.Stops)
	fmt.Fprintf(w, "traced calls:        %d\n", s.TracedCalls)
	fmt.Fprintf(w, "stops per call:      %.3f\n", perCall)
	fmt.Fprintf(w, "breakpoints:         %d\n", s.Breakpoints)
	fmt.Fprintf(w, "threads:             %d\n", s.AllThreads)
	fmt.Fprintf(w, "processes:           %d\n", s.Processes)
	fmt.Fprintf(w, "stops per second:    %.0f\n", perSec)
	fmt.Fprintf(w, "elapsed:             %s\n", s.Elapsed.Truncate(time.Millisecond))
	if s.AttachPause > 0 {
		fmt.Fprintf(w, "attach pause:        %s (every thread held stopped while the probes went in)\n", s.AttachPause.Truncate(10*time.Microsecond))
	}
	if s.DetachPause > 0 {
		fmt.Fprintf(w, "detach pause:        %s (every thread held stopped while the probes came out)\n", s.DetachPause.Truncate(10*time.Microsecond))
	}
	if s.Held > 0 {
		fmt.Fprintf(w, "threads left out:    %d (another tracer has them), parked %d times while code changed\n", s.Held, s.Parks)
	}
	fmt.Fprintf(w, "inline probes:       %d functions\n", s.Probes.Inline)
	if s.Probes.Exits > 0 {
		fmt.Fprintf(w, "exit probes:         %d timed functions (their returns jump to a probe; the other timed functions' returns are hijacked)\n", s.Probes.Exits)
		if s.PlansCached > 0 {
			fmt.Fprintf(w, "plans cached:        %d functions' exits read from the plan cache ($%s), not from their instructions\n", s.PlansCached, planCacheEnv)
		}
		if s.PlanCacheErr != "" {
			fmt.Fprintf(w, "plan cache:          not written: %s\n", s.PlanCacheErr)
		}
	}
	if s.Probes.CallEntries > 0 {
		fmt.Fprintf(w, "probes at a call:    %d functions (a call begins them: its target is the probe's, their first bytes stay)\n", s.Probes.CallEntries)
	}
	if s.Probes.Counted > 0 {
		fmt.Fprintf(w, "counting probes:     %d functions (calls counted, not timed; %d moved from timed, too short)\n", s.Probes.Counted, s.Probes.Moved)
		if s.Probes.Spilled > 0 {
			fmt.Fprintf(w, "  past count table:  %d calls (their call sites found their thread's table full: counted from ring events)\n", s.Probes.Spilled)
		}
		if s.Probes.Fast > 0 {
			fmt.Fprintf(w, "counting fast path:  %d functions, %d calls counted by one increment (one thread of a process, busiest call sites; %d of them re-aimed at their own)\n", s.Probes.Fast, s.Probes.FastCalls, s.Probes.FastSites)
		}
	}
	fmt.Fprintf(w, "trap probes:         %d functions\n", s.Probes.Trap)
	reasons := make([]string, 0, len(s.Probes.Refused))
	for r := range s.Probes.Refused {
		reasons = append(reasons, r)
	}
	sort.Slice(reasons, func(i, j int) bool {
		if s.Probes.Refused[reasons[i]] != s.Probes.Refused[reasons[j]] {
			return s.Probes.Refused[reasons[i]] > s.Probes.Refused[reasons[j]]
		}
		return reasons[i] < reasons[j]
	})
	for _, r := range reasons {
		fmt.Fprintf(w, "  no inline probe:   %d: %s\n", s.Probes.Refused[r], r)
	}
	fmt.Fprintf(w, "ring events:         %d\n", s.Rings.Events)
	fmt.Fprintf(w, "ring stalls:         %d (%s waiting)\n", s.Rings.Stalls, time.Duration(s.Rings.StallNs).Truncate(time.Microsecond))
	fmt.Fprintf(w, "events dropped:      %d\n", s.Rings.Dropped)
	fmt.Fprintf(w, "calls not traced:    %d (threads without a ring)\n", s.Rings.Unregistered)
	if c := s.CPUSamples; c != nil {
		if c.NotSampled != "" {
			fmt.Fprintf(w, "cpu samples:         not every thread: %s\n", c.NotSampled)
		}
		fmt.Fprintf(w, "cpu samples:         %d every %s (%d in the kernel, %d in the probes' code, %d lost)\n",
			c.Samples, time.Duration(c.PeriodNs), c.Kernel, c.InProbes, c.Lost)
		if s.TooFewSamples {
			fmt.Fprintf(w, "  too few to time the calls by: the profile keeps measured times\n")
		}
		writeProbeCode(w, s.ProbeCode, c.InProbes)
	}
	fmt.Fprintf(w, "frames left in code: %d (returning into the inline probes' code at detach)\n", s.StackRefs)
	if s.Expand.Taken > 0 {
		fmt.Fprintf(w, "auto-expand:         %d functions taken, %d callees added\n", s.Expand.Taken, s.Expand.Added)
		fmt.Fprintf(w, "  pauses:            %d (every thread stopped to patch: %s in all)\n", s.Expand.Pauses,
			time.Duration(s.Expand.PausedNs).Truncate(time.Microsecond))
	}
	if s.Context.Spec != "" {
		fmt.Fprintf(w, "context:             %s\n", s.Context.Spec)
		fmt.Fprintf(w, "  calls outside it:  %d let go by inline probes (no event)\n", s.Context.OutsideCalls)
		fmt.Fprintf(w, "  stops outside it:  %d at trap probes\n", s.Context.OutsideStops)
	}
}

// timedOptions reads --timed: with the --expand roots, the functions
// --sample never moves to counting.
func (f *traceFlags) timedOptions(opt *attach.Options) error {
	if f.timed != "" && f.sample == 0 {
		return usagef("--timed keeps functions timed that sampling would move to counting: not with --sample 0")
	}
	var alts []string
	if f.timed != "" {
		if _, err := regexp.Compile(f.timed); err != nil {
			return usagef("--timed: %v", err)
		}
		alts = append(alts, "(?:"+f.timed+")")
	}
	for _, root := range f.expand {
		alts = append(alts, "^"+regexp.QuoteMeta(root)+"$")
	}
	if f.sample > 0 && len(alts) > 0 {
		opt.Timed = regexp.MustCompile(strings.Join(alts, "|"))
	}
	return nil
}
