package attach

import (
	"cmp"
	"errors"
	"math"
	"slices"
	"time"

	"github.com/profile-dev/profile/attach/internal/inline"
	"github.com/profile-dev/profile/attach/internal/perfsample"
	"github.com/profile-dev/profile/attach/internal/stub"
	"github.com/profile-dev/profile/instrument"
	"github.com/profile-dev/profile/instrument/unwind"
	"github.com/profile-dev/profile/internal/tsc"
	"github.com/profile-dev/profile/model"
)

// sampling: each traced thread's CPU time sampled (Options.SamplePeriod),
// every sample given to the calling context the thread's probe events say
// was running then (docs/design.md, Sampled times).
type sampling struct {
	raw          *tsc.RawMap // a sample's clock to the probes' ticks
	sampleKernel bool        // samples in the kernel too (else user mode only)
	skewTicks    uint64      // sampleSkew in ticks
	notSampled   string      // why the threads could not be sampled, "" if they were
	cpu          model.CPUSamples
	// userSamples: the samples taken in user code outside the probes;
	// untracedSamples, by module, those in a module none of whose
	// functions is traced (untraced.go).
	userSamples     int64
	untracedSamples map[string]int64
}

// threadSamples is one thread's sampler and the samples read but not yet
// given to a context, in session ns.
type threadSamples struct {
	s        *perfsample.Sampler
	pending  []pendingSample
	readTick uint64 // when its sampler was last read: every sample taken sampleSkew before it is read
}

// pendingSample is a sample read, placed in time and in code (sampleFunc)
// but not in a context yet.
type pendingSample struct {
	ns       int64
	fn       int
	owner    int // the innermost timed function on its stack, model.None if unknown
	inProbes bool
	// in the probes' code: its part (probePart) and offset in the stub
	// code (-1 outside it); inProbes false behind an exit's clock read
	part   string
	off    int
	kernel bool
}

// sampleSkew is how far a sample's time may lie from the probes' ticks
// around it: the raw clock's map to the ticks is exact to some ns, but
// each CPU's time-stamp counter may differ from the others' by some
// hundred ticks, and the kernel stamps a sample a little after it stopped
// the thread. Within this of an event, a sample goes to the side of it
// that its stack agrees with.
const sampleSkew = int64(2 * time.Microsecond)

// rawFresh is how old the raw clock's map to the ticks may grow before
// samples are converted by it: a map refined once a second put a sample
// taken late in that second up to 7µs off the probes' events, far out of
// sampleSkew (samples given to the function entered next or left before).
const rawFresh = 10 * time.Millisecond

// sampleStack is how much of a thread's stack each sample carries: enough
// to unwind from a library (malloc, printf) or the kernel's entry to the
// first traced caller, as perf's DWARF call chains do.
const sampleStack = 4096

// sampleFrames bounds that unwinding.
const sampleFrames = 16

// errOffStack: the unwinder asked for memory the sample did not copy.
var errOffStack = errors.New("outside the sampled stack")

// startSampling opens thread t's sampler, if sampling is asked for and
// allowed. The first refusal is kept for the profile; the others follow
// it silently.
func (e *engine) startSampling(t *thread) {
	period := e.opt.SamplePeriod
	if period <= 0 || t.smp != nil || e.notSampled != "" {
		return
	}
	if e.clock == nil {
		// Samples are placed among the inline probes' events, on their
		// clock: trap probes alone keep measured times.
		e.notSampled = "no inline probes: times are measured, not sampled"
		return
	}
	if e.raw == nil {
		e.raw = tsc.NewRawMap(2 * time.Millisecond) // refined as samples are read
		e.sampleKernel = true
		e.skewTicks = uint64(float64(sampleSkew) / e.clock.NsPerTick())
	}
	s, err := perfsample.Open(t.tid, int64(period), e.sampleKernel, sampleStack)
	if err != nil && e.sampleKernel && errors.Is(err, perfsample.ErrNotPermitted) {
		// The kernel's part needs perf_event_paranoid <= 1 (or
		// CAP_PERFMON): user mode alone then.
		if s, err = perfsample.Open(t.tid, int64(period), false, sampleStack); err == nil {
			e.sampleKernel = false
		}
	}
	if err != nil {
		e.notSampled = err.Error()
		e.warn("%v", err)
		return
	}
	t.smp = &threadSamples{s: s}
}

// readSamples takes what t's sampler holds, in session ns.
func (e *engine) readSamples(t *thread) {
	if t.smp == nil {
		return
	}
	e.raw.RefineIfOlder(rawFresh)
	t.smp.readTick = tsc.Read()
	t.smp.s.Read(func(x perfsample.Sample) {
		fn, owner, inProbes := e.sampleFunc(t, x)
		ps := pendingSample{ns: e.clock.Ns(e.raw.Tick(x.TimeNs)), fn: fn, owner: owner, inProbes: inProbes, kernel: !x.User}
		if inProbes {
			ip, _ := userIP(x)
			ps.part, ps.off = probePart(t.proc.as, ip)
			// Behind an exit's clock read: the program's, after its exit
			// event (the caller's, by time alone); part and off say so.
			ps.inProbes = !behindExitClock(ps.part, ps.off)
		}
		t.smp.pending = append(t.smp.pending, ps)
	})
}

// samplesBefore reads t's sampler again when an event at tick may be
// newer than its samples read: every sample taken before an event must
// be read before the event changes the context. Read once per drain, a
// sample taken while the ring was drained went to the context after
// events that came later than it.
func (e *engine) samplesBefore(t *thread, tick uint64) {
	if t.smp != nil && tick+e.skewTicks > t.smp.readTick {
		e.readSamples(t)
	}
}

// flushSamples gives t's pending samples taken up to upTo to the context
// running on t: their function's (sampleFunc) below the innermost open
// frame, else that frame. A sample in the probes' own code is their
// cost, not the program's.
func (e *engine) flushSamples(t *thread, upTo int64) { e.flushBefore(t, upTo, nil) }

// flushBefore gives t's pending samples taken before ring event ev at
// upTo (nil: no event, time alone decides) to the context running now.
// Within sampleSkew of an entry or exit a sample goes to the side its
// stack agrees with: a sample in tiny stamped just after its caller
// returned is still its caller's, one in a function stamped just before
// its entry is already its own.
func (e *engine) flushBefore(t *thread, upTo int64, ev *inline.Event) {
	if t.smp == nil || len(t.smp.pending) == 0 || t.smp.pending[0].ns-sampleSkew > upTo {
		return // pending holds samples in time order: none is placed yet
	}
	// top runs now; next will after ev (an exit leaves the frame below
	// on top).
	top, next := model.None, model.None
	if ev != nil && ev.ID != stub.StallID {
		var below int
		top, below = e.s.Top(t.st)
		next = int(ev.ID)
		if ev.ID == stub.ExitID {
			next = below
		}
	}
	period := int64(e.opt.SamplePeriod)
	k, kept := 0, 0
	for _, x := range t.smp.pending {
		window := next != model.None && x.owner != model.None
		if x.ns > upTo && (!window || x.ns > upTo+sampleSkew) {
			break // pending holds samples in time order
		}
		place := x.ns <= upTo
		if window && x.ns > upTo-sampleSkew {
			if mine, theirs := x.owner == top, x.owner == next; mine != theirs {
				place = mine
			}
		}
		k++
		if !place {
			t.smp.pending[kept] = x // the next context's
			kept++
			continue
		}
		if x.inProbes {
			e.cpu.InProbes++
			e.stats.ProbeCode.count(x.part, x.off)
			if top, _ := e.s.Top(t.st); top > model.StartFunc && e.s.Profile().IsWaitingFunc(top) {
				e.stats.ProbeCode.InWaiting++
			}
			continue
		}
		if x.kernel {
			e.cpu.Kernel++
		}
		if behindExitClock(x.part, x.off) {
			e.stats.ProbeCode.BehindExitClock++
		}
		e.cpu.Samples++
		e.s.Sample(t.st, x.fn, period)
	}
	t.smp.pending = t.smp.pending[:kept+copy(t.smp.pending[kept:], t.smp.pending[k:])]
}

// flushAll gives t all its samples so far: t is stopped, or its events
// are all drained.
func (e *engine) flushAll(t *thread) {
	e.readSamples(t)
	e.flushSamples(t, math.MaxInt64)
}

// sampledAt is the traced function whose code holds ip (model.None if
// none), and whether ip lies in the probes' own code.
func (e *engine) sampledAt(as *space, ip uint64) (int, bool) {
	if as.areaOf(ip) != nil {
		// A trampoline's relocated instructions are its function's first
		// ones, run there: the function's time, not the probe's.
		if fn := relocatedAt(as, ip); fn != model.None {
			return fn, false
		}
		return model.None, true
	}
	fn, _ := e.tracedAt(as, ip)
	return fn, false
}

// relocatedAt is the function whose relocated first instructions lie at
// ip in a trampoline, or model.None.
func relocatedAt(as *space, ip uint64) int {
	if as.inl == nil {
		return model.None
	}
	as.indexTramps()
	i, _ := slices.BinarySearchFunc(as.bodies, ip+1, func(b trampBody, t uint64) int { return cmp.Compare(b.lo, t) })
	if i > 0 {
		if b := as.bodies[i-1]; ip >= b.lo && ip < b.hi {
			return b.fn
		}
	}
	return model.None
}

// indexTramps rebuilds, when the patches have changed, the indexes of
// the trampolines' relocated instructions (bodies) and of the probes'
// code by part (parts, probePart): samples are placed by them.
func (as *space) indexTramps() {
	is := as.inl
	of := [2]int{len(is.Patches), 0}
	if as.fast != nil {
		of[1] = as.fast.paths
	}
	if as.bodiesOf == of {
		return
	}
	as.bodies, as.bodiesOf = as.bodies[:0], of
	for _, p := range is.Patches {
		if p.Patch.Len > 0 && p.Fn != model.None && len(p.Patch.Tramp) > instrument.TrampBody {
			as.bodies = append(as.bodies, trampBody{p.TrampAt + instrument.TrampBody, p.TrampAt + uint64(len(p.Patch.Tramp)), p.Fn})
		}
		for _, b := range p.ExitBodies {
			as.bodies = append(as.bodies, trampBody{b[0], b[1], p.Fn})
		}
	}
	as.bodies = append(as.bodies, as.fastBodies()...)
	slices.SortFunc(as.bodies, func(a, b trampBody) int { return cmp.Compare(a.lo, b.lo) })
	as.parts = codeParts(as)
}

// trampBody is a trampoline's relocated instructions, [lo, hi), and their
// function.
type trampBody struct {
	lo, hi uint64
	fn     int
}

// stopSampling gives t its last samples and closes its sampler.
func (e *engine) stopSampling(t *thread) {
	if t.smp == nil {
		return
	}
	e.flushAll(t)
	e.cpu.Lost += t.smp.s.Lost()
	t.smp.s.Close()
	t.smp = nil
}

// minSamples is the fewest CPU samples a profile's busy times are taken
// from: with fewer, a function's share is off by more than a point or two
// (a share p of n samples varies by sqrt(p(1-p)/n)), and the measured
// times are truer. A quarter second of CPU time at the default period.
const minSamples = 1000

// measuredIfFew takes the samples out of p when they are too few to time
// its calls by (minSamples): p keeps its measured times, as if not
// sampled. It tells whether it did.
func measuredIfFew(p *model.Profile) bool {
	cs := p.Meta.CPUSamples
	if cs == nil || cs.Samples >= minSamples || cs.NotSampled != "" && cs.Samples == 0 {
		return false
	}
	p.Meta.CPUSamples = nil
	for ti := range p.Threads {
		for ni := range p.Threads[ti].Nodes {
			n := &p.Threads[ti].Nodes[ni]
			n.SampledNs, n.DroppedSampledNs = 0, 0
		}
	}
	return true
}

// sampledMeta is what the profile says of its sampled times.
func (e *engine) sampledMeta() *model.CPUSamples {
	if e.opt.SamplePeriod <= 0 {
		return nil
	}
	m := e.cpu
	m.PeriodNs = int64(e.opt.SamplePeriod)
	m.WithKernel = e.sampleKernel
	m.NotSampled = e.notSampled
	return &m
}

// sampleFunc is the traced function a sample's time belongs to: the one
// whose code holds its instruction or, in code of no traced function (a
// library, the kernel), the first traced caller its stack shows (as perf
// gives a sample to the innermost frame of a module); model.None if none
// (the innermost open frame takes it). owner is the innermost timed
// function its stack shows (fn, unless fn is counted), model.None if
// unknown: the frame that must be open when the sample was taken.
// inProbes: the probes' own code.
func (e *engine) sampleFunc(t *thread, x perfsample.Sample) (fn, owner int, inProbes bool) {
	as := t.proc.as
	fn, owner = model.None, model.None
	// The user instruction says whose it is even when the kernel could
	// not copy the stack (it cannot while it switches the thread out: a
	// run sharing its CPU with the tracer had a fifth of its samples so,
	// all given to the outermost open frame before).
	if ip, known := userIP(x); known {
		f, in := e.sampledAt(as, ip)
		if in {
			return model.None, model.None, true
		}
		if x.User {
			e.noteUserSample(as, ip)
		}
		if f != model.None && !e.counted[f] {
			return f, f, false
		}
		fn = f
	}
	if !x.HasRegs || len(x.Stack) == 0 {
		return fn, owner, false
	}
	r, stack := x.Regs, x.Stack
	mem := func(addr uint64, buf []byte) error {
		if addr < r.SP || addr+uint64(len(buf)) > r.SP+uint64(len(stack)) {
			return errOffStack
		}
		copy(buf, stack[addr-r.SP:])
		return nil
	}
	frames := unwind.Unwind(e.unwindModules(t.proc), unwind.Regs{RIP: r.IP, RSP: r.SP, RBP: r.BP, RBX: r.BX,
		R12: r.R12, R13: r.R13, R14: r.R14, R15: r.R15}, mem, sampleFrames)
	for i, f := range frames {
		if i == 0 {
			continue // the user instruction, placed above
		}
		pc := f.PC - 1 // a return address may lie past its caller's last byte
		g, in := e.sampledAt(as, pc)
		if in {
			break // a return through the probes: the open frame's
		}
		if g == model.None {
			continue
		}
		if fn == model.None {
			fn = g
		}
		if !e.counted[g] {
			owner = g
			break
		}
	}
	return fn, owner, false
}

// userIP is a sample's user instruction: the sample's, or for one in the
// kernel the one at the kernel's entry; known false if neither is.
func userIP(x perfsample.Sample) (ip uint64, known bool) {
	if x.User {
		return x.IP, true
	}
	return x.Regs.IP, x.HasRegs
}
