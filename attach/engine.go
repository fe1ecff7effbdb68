// Package attach is the online engine (docs/engine.md; docs/design.md,
// Engine): it launches or attaches to processes with ptrace, puts
// breakpoints on function entries and return sites, executes displaced
// instructions out of line, follows threads, forks and execs, and feeds the
// call and lifecycle events to a session.Session, which builds the profile.
// Every ptrace call happens on one locked OS thread; nothing outside this
// package issues ptrace requests.
package attach

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"runtime"
	"syscall"
	"time"

	"github.com/profile-dev/profile/attach/internal/ptrace"
	"github.com/profile-dev/profile/detail"
	"github.com/profile-dev/profile/instrument"
	"github.com/profile-dev/profile/model"
)

// Options control a tracing session.
type Options struct {
	Filter       *instrument.Filter
	NoFollowFork bool
	// Tree: AttachAll takes each process with every descendant it has at
	// that moment (children created later are followed as ever).
	Tree bool
	// Debug, when set, finds the separate debug files of stripped
	// modules, whose functions are then traced like any other.
	Debug *instrument.DebugSearch
	// Force traces programs that are refused otherwise (Go programs).
	Force bool
	// Probes is the probe kind: ProbesAuto (inline where a function can
	// be patched safely, a trap elsewhere), ProbesInline or ProbesTrap.
	Probes string
	// Meta is copied into the profile (filters, tool version, ...).
	Meta model.Meta

	Live   LiveOptions
	Detail DetailOptions
	// Context, when set, records the functions it gates only while its
	// components are on the thread's stack, in order (--context A>B).
	// Its components are traced wherever they run.
	Context *instrument.Context
	Expand  ExpandOptions
	// PlanCache, when set, is the directory where the plans read from a
	// module's instructions are kept for the next session that maps the
	// same file (attach/internal/plancache).
	PlanCache string
	// Counted, when set, gives the traced functions whose name or
	// module:name it matches the counting probe: exact calls per caller,
	// no time (their time is their callers' self time). Functions asked
	// for in time (Detail, Context, the checkpoint, waiting calls) stay
	// timed.
	Counted *regexp.Regexp
	// SamplePeriod, when positive, samples each traced thread's CPU time
	// every SamplePeriod of it (perf_event_open) and gives each sample to
	// the calling context running then: busy times come from the samples
	// (model.CPUSamples).
	SamplePeriod time.Duration
	// Timed, when set, keeps the functions it matches (name or
	// module:name) timed: with SamplePeriod a function whose calls are
	// too short to time moves to the counting probe (adapt.go) unless
	// the user asked to see it timed.
	Timed *regexp.Regexp

	// Compensate takes the probes' cost per call out of the profile's
	// times, with the time the tracer held threads to set up
	// (model.Compensate). Calibration is the cost; when nil, Record
	// measures it before launching (PrepareCompensation) and Attach once
	// detached, so that attaching is not delayed (a profiler killed while
	// attaching is the riskiest moment for the target).
	Compensate  bool
	Calibration *model.Calibration

	ownOptions
}

// LiveOptions: what the session hands out while it runs.
type LiveOptions struct {
	// Progress, when set, is called from the engine about four times a
	// second with the running numbers.
	Progress func(Stats)
	// Snapshot, when set, receives a live profile (as if every thread
	// ended now; tracing goes on) and the running numbers: every Every
	// when positive, at each return of the Checkpoint function (at most
	// once a second of the target's time), and on each request from Now.
	// It is called with the engine held: it must hand the profile off,
	// not work on it.
	Snapshot func(*model.Profile, Stats)
	Every    time.Duration
	// Checkpoint names a function, as a symbol ("handle_request") or
	// module:symbol.
	Checkpoint string
	Now        <-chan struct{}
	// OnCrash, when set, receives the profile so far when a fatal signal
	// is about to end a traced process, before the signal goes through.
	OnCrash func(*model.Profile)
}

// DetailOptions: record in detail the calls of the traced functions whose
// name or module:name matches Funcs that meet Rule (entry and exit times,
// arguments, return value), with their ancestors; nil Funcs: none.
type DetailOptions struct {
	Funcs *regexp.Regexp
	Rule  detail.Rule
}

// ExpandOptions: when Top is positive, trace more functions as the
// program runs (--auto-expand N): every Every, the Top functions with the
// most busy self time so far (not taken before) get their callees
// discovered in their code, Depth levels down, and traced from then on;
// each function's Profile entry says since when (TracedSinceNs). Report,
// when set, hears of each function taken.
type ExpandOptions struct {
	Top    int
	Every  time.Duration
	Depth  int
	Report func(Expansion)
}

// ownOptions are set by this package alone: its tests and the runs of its
// own programs (calibration).
type ownOptions struct {
	// paused (tests) is called whenever the threads we do not trace have
	// been parked for code to change (ours are stopped then).
	paused func()
	// wakers, when set, replaces defaultWakers (a test's machine without
	// true).
	wakers []string
	stdout *os.File // the recorded program's stdout (tests), os.Stdout if nil
	// refineEvery is how often the clock re-measures its rate (tests: a
	// run then spans many refinements), a second if 0.
	refineEvery time.Duration
	// clockSkew (tests): the tracer's clock reads this much early and
	// late in turn, as if it moved between CPUs whose time-stamp counters
	// differ by twice as much: a thread's ring events and its stops then
	// come from clocks that disagree, as they may on any host.
	clockSkew time.Duration
	quiet     bool // the recorded program gets no stdin, stdout or stderr
	// hijackOnly (tests): every timed inline probe has its return
	// hijacked, none gets exit probes (both ways run the engine suite).
	hijackOnly bool
	// helper: the recorded program is ours (the calibration program): it
	// dies with the profiler's tracer thread rather than trap without it.
	helper bool
	dir    string // the recorded program's working directory (tests)
}

// Probe kinds (docs/design.md, Inline probes and Trap probes).
const (
	ProbesAuto   = "auto"
	ProbesInline = "inline"
	ProbesTrap   = "trap"
)

// CheckProbes says what is wrong with a probe kind ("" is auto).
func CheckProbes(kind string) error {
	switch kind {
	case "", ProbesAuto, ProbesInline, ProbesTrap:
		return nil
	}
	return fmt.Errorf("unknown probe kind %q: auto, inline or trap", kind)
}

// Stats are the engine's counters, grouped by the subsystem that keeps
// them.
type Stats struct {
	Elapsed     time.Duration
	Stops       int64
	TracedCalls int64
	Breakpoints int64
	Threads     int // live threads
	AllThreads  int
	Processes   int
	// AttachPause: how long an attach held the process stopped, from
	// the first thread's interrupt to the last one's resume (probes
	// written, stacks unwound): the one stall a target notices.
	AttachPause time.Duration
	// DetachPause: how long the detach held the process stopped, from
	// the last thread's stop to the first one's release.
	DetachPause time.Duration
	// PlansCached: functions whose exit plans came from the plan cache
	// (Options.PlanCache) instead of a walk of their instructions.
	PlansCached int
	// PlanCacheErr: why the plan cache could not be written, "" if it was.
	PlanCacheErr string
	// Held: threads left out because another tracer has them (or such
	// a thread made them), and how often they were parked while code
	// changed (park.go).
	Held, Parks int

	Probes   ProbeStats
	Rings    RingStats
	Context  ContextStats
	Expand   ExpandStats
	Leftover LeftoverStats
	// CPUSamples: the threads' CPU samples (Options.SamplePeriod), nil
	// if not asked for.
	CPUSamples *model.CPUSamples
	// TooFewSamples: there were too few of them (minSamples) to time
	// the calls by: the profile keeps its measured times.
	TooFewSamples bool
	// ProbeCode: where the samples in the probes' code lie.
	ProbeCode ProbeCodeStats
	// StackRefs counts frames that would return into the inline probes'
	// code after detach (which then leaves it mapped): 0 is the goal.
	StackRefs int
}

// ProbeStats: functions per probe kind, and why functions got no inline
// probe.
type ProbeStats struct {
	Inline int
	Trap   int
	// Counted: inline probes that only count (Options.Counted), Moved of
	// them timed first, moved to counting live (adapt.go).
	Counted int
	Moved   int
	// Fast: counted functions given a fast path, FastCalls the calls it
	// counted (fastcount.go), FastSites the call sites re-aimed at a fast
	// path of their own (fastsite.go).
	Fast      int
	FastCalls int64
	FastSites int
	// Demoted: trap probes taken out of functions found hot (auto).
	Demoted int
	// Exits: timed inline-probed functions whose returns take exit
	// probes (the others' returns are hijacked).
	Exits int
	// Sites: inline probes at a function's call sites, its first bytes
	// refusing the jump.
	Sites int
	// CallEntries: inline probes at the call that begins a function
	// (instrument.PlanCallEntry).
	CallEntries int
	// Spilled: counted calls their thread's count table had no room for
	// (a call site past its 8,192), each counted from a ring event.
	Spilled int64
	Refused map[string]int
}

// RingStats: the inline probes' ring events, stub waits for a full ring,
// events dropped (the tracer gone or stalled), calls of threads without a
// ring.
type RingStats struct {
	Events       int64
	Stalls       int64
	StallNs      int64
	Dropped      int64
	Unregistered int64
}

// ContextStats: Spec is the calling context (--context), "" if none.
// OutsideCalls counts the calls of the functions it gates made outside it
// that inline probes let go with no event; OutsideStops the stops trap
// probes made for such calls (0 unless another thread was in the context
// meanwhile: the breakpoints are armed only then).
type ContextStats struct {
	Spec         string
	OutsideCalls int64
	OutsideStops int64
}

// ExpandStats: auto-expand (Options.Expand): the functions taken, the
// callees it added, and the times it stopped every thread to patch them,
// with how long that held the threads (in all).
type ExpandStats struct {
	Taken    int
	Added    int
	Pauses   int
	PausedNs int64
}

// LeftoverStats: what profilers killed while attached had left, undone at
// attach (attach/leftover.go): inline patches, int3s, SIGTRAP and SIGURG handlers;
// Areas a killed profiler's areas unmapped, Kept those left mapped because
// something still reaches them; Why says what did, the last time a
// reclaim kept them (at the attach, or again at the detach).
type LeftoverStats struct {
	Patches  int
	Int3s    int
	Handlers int
	Areas    int
	Kept     int
	Why      string
}

// Result is what a session produced.
type Result struct {
	Profile *model.Profile
	Stats   Stats
	// Pid is the first process's pid.
	Pid int
	// ExitCode and Signal describe how the first process ended (record).
	ExitCode   int
	Signal     syscall.Signal
	Exited     bool // the first process ended (rather than being detached)
	CoreDumped bool // ... and dumped core
}

// ErrNoFunctions means the filters selected nothing to trace.
var ErrNoFunctions = errors.New("nothing to trace: no function matched the filters")

// Record launches argv under the tracer and traces it from its first
// instruction until it exits or ctx ends (then it detaches and lets it run).
func Record(ctx context.Context, argv []string, opt Options) (*Result, error) {
	PrepareCompensation(ctx, &opt)
	return run(ctx, opt, func(e *engine) error { return e.launch(argv) })
}

// Attach traces every thread of process pid until ctx ends or it exits.
func Attach(ctx context.Context, pid int, opt Options) (*Result, error) {
	return AttachAll(ctx, []int{pid}, opt)
}

// AttachAll is Attach for several processes at once (and, with
// Options.Tree, their descendants): one engine, one profile. Result.Pid
// is the first's.
func AttachAll(ctx context.Context, pids []int, opt Options) (*Result, error) {
	return run(ctx, opt, func(e *engine) error { return e.attachAll(pids) })
}

// run executes a session on one locked OS thread: the tracer thread.
func run(ctx context.Context, opt Options, start func(*engine) error) (*Result, error) {
	type out struct {
		r   *Result
		err error
	}
	var cal *model.Calibration
	if opt.Calibration != nil {
		c := *opt.Calibration // copied: the engine fills in what it took out
		cal = &c
	}
	ch := make(chan out, 1)
	go func() {
		runtime.LockOSThread()
		// Never unlocked: the thread dies with the goroutine, so no other
		// goroutine inherits a thread that was a tracer.
		e := newEngine(opt)
		defer func() {
			if e.line != nil {
				e.line.Close() // on this thread, which registered it
			}
		}()
		e.cal = cal
		e.spinMax = ptrace.SpinMax()
		if err := e.prepareInline(); err != nil {
			ch <- out{nil, err}
			return
		}
		e.mu.Lock()
		if err := start(e); err != nil {
			e.abandon()
			e.mu.Unlock()
			e.closeGuard()
			ch <- out{nil, err}
			return
		}
		stop := make(chan struct{})
		go e.watch(ctx, stop)
		if e.clock != nil {
			go e.drainLoop()
		}
		if opt.Live.Progress != nil || opt.Live.Snapshot != nil {
			go e.liveLoop(stop)
		}
		if opt.Expand.Top > 0 && opt.Expand.Every > 0 {
			go e.expandLoop(stop)
		}
		if e.adaptive() {
			go e.adaptLoop(stop)
		}
		r, err := e.loop()
		e.drainDone = true
		e.mu.Unlock()
		close(stop)
		if r != nil {
			e.finishCompensation()
			r.Profile = e.compensated(r.Profile)
		}
		e.closeGuard() // before our caller may exit: a clean end
		ch <- out{r, err}
	}()
	o := <-ch
	return o.r, o.err
}

// WaitExit waits for a process that Record started and then let go (it is
// our child, no longer traced) and reports how it ended, as Result does.
func WaitExit(pid int) (code int, sig syscall.Signal, err error) {
	var ws syscall.WaitStatus
	for {
		_, err = syscall.Wait4(pid, &ws, 0, nil)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return 0, 0, fmt.Errorf("wait for pid %d: %w", pid, err)
	}
	if ws.Signaled() {
		return 0, ws.Signal(), nil
	}
	return ws.ExitStatus(), 0, nil
}

// watch wakes the tracer when ctx ends: the tracer may sit in wait4 while
// the target blocks, so a short-lived child of ours ends that wait.
func (e *engine) watch(ctx context.Context, stop <-chan struct{}) {
	select {
	case <-stop:
		return
	case <-ctx.Done():
	}
	e.stopRequested.Store(true)
	e.wake()
}

// WakerEnv, set in its environment, makes a profile that starts exit at
// once: the tracer's wake-up child where there is no true to run.
const WakerEnv = "PROFILE_WAKER"

// defaultWakers are what a wake-up child runs: true, else the tracer's
// own executable with WakerEnv set, there whatever the machine holds (a
// container without coreutils, where a Ctrl-C could not end the wait).
func defaultWakers() []string { return []string{"/bin/true", "/usr/bin/true", "/proc/self/exe"} }

// wake makes the tracer look at its requests: a short-lived child of ours
// ends the wait it may sit in while the target blocks.
func (e *engine) wake() {
	paths := defaultWakers()
	if e.opt.wakers != nil {
		paths = e.opt.wakers
	}
	for _, p := range paths {
		attr := &os.ProcAttr{Env: []string{WakerEnv + "=1"}}
		if pr, err := os.StartProcess(p, []string{"profile-waker"}, attr); err == nil {
			e.wakers.Store(pr.Pid, true)
			pr.Release()
			return
		}
	}
}

// waker tells (once) whether the stop of tid is a wake-up child's end.
func (e *engine) waker(tid int) bool {
	_, ok := e.wakers.LoadAndDelete(tid)
	return ok
}
