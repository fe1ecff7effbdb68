package attach

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/profile-dev/profile/model"
)

// sampled is each function's sampled CPU time over every thread's tree,
// and the time of its nodes that have no calls (sample-only nodes) by
// "parent>function".
func sampled(p *model.Profile) (ns, only map[string]int64) {
	ns, only = map[string]int64{}, map[string]int64{}
	for _, th := range p.Threads {
		for _, n := range th.Nodes {
			f := p.FuncName(n.Func)
			ns[f] += n.SampledNs
			if n.Parent != model.None && n.Calls == 0 && n.InFlight == 0 {
				only[p.FuncName(th.Nodes[n.Parent].Func)+">"+f] += n.SampledNs
			}
		}
	}
	return ns, only
}

// cpusplit spins three units in heavy for each unit in light: sampled
// every 100µs of its CPU time, heavy's samples are to light's as the CPU
// time the workload's own clock gave their spins (3:1, bent to 2.7–3.3 by
// the machine: a hypervisor's other guests, the tracer on the sibling
// CPU), within 5% (1.5% in 150 runs beside a busy loop); tiny, counted,
// gets its own samples in a node below light with no calls, beside its
// exact calls; fill, counted too, gets the samples taken in the C
// library's memset it calls (found by unwinding the sampled stack), as
// perf gives a sample to the innermost frame of the program, in the
// context of main, which calls it. No sample goes anywhere else, not even
// one stamped a little off the probes' events around it (its stack says
// which side of them it was taken on). The samples add up to no more
// than the run's traced time. Trap probes alone keep measured times and
// say so. The result's Stats split all the samples in the probes' code.
func TestSampledTimes(t *testing.T) {
	for _, kind := range []string{ProbesAuto, ProbesTrap} {
		t.Run(kind, func(t *testing.T) {
			opt := defaultOptions(t)
			opt.Probes, opt.Counted, opt.SamplePeriod = kind, regexp.MustCompile(`^(tiny|fill)$`), 100*time.Microsecond
			// Some 7,000 samples: 300 rounds gave 1,000-1,500 on a fast
			// host, at the fewest a profile keeps (minSamples), and light's
			// share varied by 5% with the split of its loop's samples
			// between it and tiny.
			rounds := "2000"
			if kind == ProbesTrap {
				rounds = "3" // two stops a call of tiny
			}
			r, out := recordWorkload(t, "cpusplit", opt, rounds)
			p := r.Profile
			cs := p.Meta.CPUSamples
			if cs == nil {
				t.Fatal("no CPUSamples in the profile")
			}
			if kind == ProbesTrap {
				if cs.NotSampled == "" || cs.Samples != 0 {
					t.Errorf("trap probes: %+v, want not sampled, with the reason", *cs)
				}
				return
			}
			if cs.NotSampled != "" || cs.Samples < 1000 || cs.PeriodNs != 100000 {
				t.Fatalf("CPUSamples %+v: want over 1,000 samples every 100µs", *cs)
			}
			var heavyCPU, lightCPU int64
			if _, err := fmt.Sscanf(out, "cpusplit: "+rounds+" rounds, heavy %d ns, light %d ns of CPU", &heavyCPU, &lightCPU); err != nil || lightCPU <= 0 {
				t.Fatalf("the workload's output %q: %v", out, err)
			}
			ns, only := sampled(p)
			ratio, own := float64(ns["heavy"])/float64(ns["light"]), float64(heavyCPU)/float64(lightCPU)
			if ratio < own*0.95 || ratio > own*1.05 {
				t.Errorf("heavy %v, light %v sampled: ratio %.2f, the workload's own CPU clock %.2f (%v ÷ %v)", time.Duration(ns["heavy"]), time.Duration(ns["light"]),
					ratio, own, time.Duration(heavyCPU), time.Duration(lightCPU))
			}
			if ns["tiny"] == 0 || only["light>tiny"] != ns["tiny"] {
				t.Errorf("tiny: %v sampled, %v of it in a sample-only node under light", time.Duration(ns["tiny"]), time.Duration(only["light>tiny"]))
			}
			for k, v := range only {
				if k != "light>tiny" && k != "main>fill" && v > 0 {
					t.Errorf("a sample-only node %s (%v): a sample in a context its stack disagrees with", k, time.Duration(v))
				}
			}
			if ns["fill"] < ns["light"]/20 || only["main>fill"] != ns["fill"] {
				t.Errorf("fill: %v sampled (light %v), %v of it in a sample-only node under main: want its memset's time there",
					time.Duration(ns["fill"]), time.Duration(ns["light"]), time.Duration(only["main>fill"]))
			}
			var total, traced int64
			for _, v := range ns {
				total += v
			}
			for _, th := range p.Threads {
				traced += th.TracedNs
			}
			if total > traced*11/10 || total < traced/4 {
				t.Errorf("%v sampled in all, %v traced", time.Duration(total), time.Duration(traced))
			}
			// The result's split of the samples in the probes' code
			// (TestProbePart: how each is placed) holds them all.
			var inParts int64
			for _, n := range r.Stats.ProbeCode.Parts {
				inParts += n
			}
			if inParts != cs.InProbes {
				t.Errorf("%d samples in the probes' code, %d in its parts %v", cs.InProbes, inParts, r.Stats.ProbeCode.Parts)
			}
			arcs := threadArcs(p)
			for _, th := range p.Threads {
				if got := arcs[th.Tid]["light>tiny"]; got != 2000*1000 {
					t.Errorf("light>tiny %d calls, want 2000000", got)
				}
			}
		})
	}
}

// With sampled times, tiny (1,000 calls of some tens of ns per round) is
// too short to time: after a second it moves to the counting probe, live.
// Its calls stay exact — those timed before in the tree, those counted
// after in the arcs, light's 1,000 a round in all — and the profile marks
// it; heavy and light, whose calls last milliseconds, stay timed.
func TestShortFunctionsMoveToCounting(t *testing.T) {
	const rounds = 1500
	opt := defaultOptions(t)
	opt.Probes, opt.SamplePeriod = ProbesAuto, 250*time.Microsecond
	r, _ := recordWorkload(t, "cpusplit", opt, strconv.Itoa(rounds))
	p := r.Profile
	if probeOf(p, "tiny") != "counted" || probeOf(p, "heavy") != "inline" || probeOf(p, "light") != "inline" {
		t.Fatalf("probes: tiny %s, heavy %s, light %s; want tiny moved to counting", probeOf(p, "tiny"), probeOf(p, "heavy"), probeOf(p, "light"))
	}
	if r.Stats.Probes.Moved != 1 {
		t.Errorf("Stats.Probes.Moved = %d, want 1", r.Stats.Probes.Moved)
	}
	timed := map[string]int64{}
	for _, th := range p.Threads {
		for _, n := range th.Nodes {
			if n.Parent != model.None && p.FuncName(n.Func) == "tiny" {
				timed[p.FuncName(th.Nodes[n.Parent].Func)] += n.Calls
			}
		}
	}
	counted := threadArcs(p)[p.Threads[0].Tid]
	if timed["light"] == 0 || counted["light>tiny"] == 0 || timed["light"]+counted["light>tiny"] != rounds*1000 || len(timed) != 1 || len(counted) != 1 {
		t.Errorf("tiny: timed %v, counted %v; want light's %d calls split between them", timed, counted, rounds*1000)
	}
	for _, f := range p.Functions {
		if f.Name == "tiny" && !strings.HasPrefix(f.ProbeNote, "counted from ") {
			t.Errorf("tiny's note %q", f.ProbeNote)
		}
	}
}

// A run too short for its samples to time its calls (a few hundred at
// most, fewer than minSamples) keeps its measured times: the profile has
// no sampled time and no CPUSamples, and the stats say why.
func TestFewSamplesKeepMeasuredTimes(t *testing.T) {
	opt := defaultOptions(t)
	opt.Probes, opt.SamplePeriod = ProbesAuto, 250*time.Microsecond
	r, _ := recordWorkload(t, "cpusplit", opt, "5")
	p := r.Profile
	if p.Meta.CPUSamples != nil || !r.Stats.TooFewSamples || r.Stats.CPUSamples == nil || r.Stats.CPUSamples.Samples >= minSamples {
		t.Fatalf("CPUSamples %+v, stats %+v (too few: %v); want the samples counted in the stats only", p.Meta.CPUSamples, r.Stats.CPUSamples, r.Stats.TooFewSamples)
	}
	var busy int64
	for _, th := range p.Threads {
		for _, n := range th.Nodes {
			if n.SampledNs != 0 || n.DroppedSampledNs != 0 {
				t.Fatalf("a node keeps sampled time: %+v", n)
			}
			if p.FuncName(n.Func) == "heavy" {
				busy += n.SelfNs
			}
		}
	}
	if busy == 0 {
		t.Error("heavy has no measured self time")
	}
}

// Where perf_event_open is refused (here by a seccomp filter, as a
// container's policy does), tracing goes on: the profile says why its
// times are not sampled, keeps them measured, moves no function to
// counting, and its counts stay exact. The filter binds the whole test
// process for good, so the test runs in a child of its own.
func TestSamplingRefused(t *testing.T) {
	if os.Getenv("PROFILE_TEST_NO_PERF") == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestSamplingRefused$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), "PROFILE_TEST_NO_PERF=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestSamplingRefused") {
			t.Fatalf("the test with perf_event_open refused: %v\n%s", err, out)
		}
		return
	}
	if err := refusePerfEvents(); err != nil {
		t.Fatal(err)
	}
	opt := defaultOptions(t)
	opt.Probes, opt.SamplePeriod = ProbesAuto, 250*time.Microsecond
	r, _ := recordWorkload(t, "cpusplit", opt, "300")
	p := r.Profile
	cs := p.Meta.CPUSamples
	if cs == nil || cs.Samples != 0 || !strings.Contains(cs.NotSampled, "forbids perf_event_open") {
		t.Fatalf("CPUSamples %+v: want none taken and why", cs)
	}
	if r.Stats.Probes.Moved != 0 || probeOf(p, "tiny") != "inline" {
		t.Errorf("%d functions moved to counting (tiny: %s): want every one timed", r.Stats.Probes.Moved, probeOf(p, "tiny"))
	}
	calls := map[string]int64{}
	for _, th := range p.Threads {
		for _, n := range th.Nodes {
			if n.SampledNs != 0 {
				t.Fatalf("sampled time in a node: %+v", n)
			}
			calls[p.FuncName(n.Func)] += n.Calls
		}
	}
	if calls["tiny"] != 300*1000 || calls["light"] != 300 || calls["heavy"] != 300 || calls["fill"] != 300 {
		t.Errorf("calls %v: want tiny 300000, light, heavy and fill 300", calls)
	}
}

// refusePerfEvents makes perf_event_open fail with EACCES in this process
// and every thread and child of it (seccomp, SECCOMP_FILTER_FLAG_TSYNC).
func refusePerfEvents() error {
	const (
		ldAbs  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq    = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		ret    = unix.BPF_RET | unix.BPF_K
		archX8 = 0xc000003e // AUDIT_ARCH_X86_64
	)
	filter := []unix.SockFilter{
		{Code: ldAbs, K: 4}, // seccomp_data.arch
		{Code: jeq, K: archX8, Jt: 0, Jf: 3},
		{Code: ldAbs, K: 0}, // seccomp_data.nr
		{Code: jeq, K: unix.SYS_PERF_EVENT_OPEN, Jt: 0, Jf: 1},
		{Code: ret, K: unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)},
		{Code: ret, K: unix.SECCOMP_RET_ALLOW},
	}
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	if _, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC,
		uintptr(unsafe.Pointer(&prog))); errno != 0 {
		return fmt.Errorf("seccomp: %w", errno)
	}
	return nil
}

// The samples in the probes' code taken while a waiting call is the
// innermost open frame (the end of its entry stub, its return up to its
// exit event: what runs first after its system call) are told apart
// (--stats): shortreads makes two million reads of one byte, each a
// waiting call a few hundred ns long, timed whatever its length (5,629
// samples of the program in one run on the AMD EPYC VM, against the
// minSamples a profile needs to keep them).
// Those behind its exit's clock read (after the system call, the work
// that read waited for: behindExitClock) are the program's, not counted
// in the probes' code. Its reads are counted exactly.
func TestProbeSamplesInWaitingCalls(t *testing.T) {
	forEachKind(t, inlineKinds, func(t *testing.T, opt Options) {
		opt.SamplePeriod = 100 * time.Microsecond
		r, out := recordWorkload(t, "shortreads", opt, "2000000")
		if out != "shortreads: 2000000 bytes\n" {
			t.Fatalf("output %q", out)
		}
		cs, pc := r.Profile.Meta.CPUSamples, r.Stats.ProbeCode
		if cs == nil || cs.NotSampled != "" {
			t.Fatalf("not sampled: %+v", cs)
		}
		if pc.InWaiting == 0 || pc.InWaiting > cs.InProbes {
			t.Errorf("%d samples in the probes' code while a waiting call was innermost, of %d in the probes' code (%v)", pc.InWaiting, cs.InProbes, pc.Parts)
		}
		if pc.BehindExitClock == 0 {
			t.Errorf("no sample behind an exit's clock read given to the program (%d in the probes' code: %v)", cs.InProbes, pc.Parts)
		}
		for off, n := range pc.StubOffsets {
			if behindExitClock(StubPart(off), off) {
				t.Errorf("%d samples at +%#x (%s), behind an exit's clock read, counted as the probes'", n, off, StubInst(off))
			}
		}
		if calls := nodeCalls(r.Profile)["libc.so.6:read"]; calls != 2000000 {
			t.Errorf("read: %d calls, want 2000000", calls)
		}
	})
}
