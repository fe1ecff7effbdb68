package attach

import (
	"errors"
	"math"
	"time"

	"github.com/profile-dev/profile/attach/internal/perfsample"
	"github.com/profile-dev/profile/internal/tsc"
	"github.com/profile-dev/profile/model"
)

// sampling: each traced thread's CPU time sampled (Options.SamplePeriod),
// every sample given to the calling context the thread's probe events say
// was running then (docs/design.md, Sampled times).
type sampling struct {
	raw          *tsc.RawMap // a sample's clock to the probes' ticks
	sampleKernel bool        // samples in the kernel too (else user mode only)
	notSampled   string      // why the threads could not be sampled, "" if they were
	cpu          model.CPUSamples
}

// threadSamples is one thread's sampler and the samples read but not yet
// given to a context, in session ns.
type threadSamples struct {
	s       *perfsample.Sampler
	pending []pendingSample
}

type pendingSample struct {
	ns   int64
	ip   uint64
	user bool
}

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
		e.raw = tsc.NewRawMap(2 * time.Millisecond) // refined with the clock
		e.sampleKernel = true
	}
	s, err := perfsample.Open(t.tid, int64(period), e.sampleKernel)
	if err != nil && e.sampleKernel && errors.Is(err, perfsample.ErrNotPermitted) {
		// The kernel's part needs perf_event_paranoid <= 1 (or
		// CAP_PERFMON): user mode alone then.
		if s, err = perfsample.Open(t.tid, int64(period), false); err == nil {
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
	t.smp.s.Read(func(x perfsample.Sample) {
		ns := e.clock.Ns(e.raw.Tick(x.TimeNs))
		t.smp.pending = append(t.smp.pending, pendingSample{ns: ns, ip: x.IP, user: x.User})
	})
}

// flushSamples gives t's pending samples taken up to upTo to the context
// running on t: the function the sample's instruction lies in, if traced,
// below the innermost open frame, else that frame. A sample in the
// probes' own code is their cost, not the program's.
func (e *engine) flushSamples(t *thread, upTo int64) {
	if t.smp == nil || len(t.smp.pending) == 0 {
		return
	}
	period := int64(e.opt.SamplePeriod)
	k := 0
	for _, x := range t.smp.pending {
		if x.ns > upTo {
			break
		}
		k++
		fn := model.None
		if x.user {
			var inProbes bool
			if fn, inProbes = e.sampledAt(t.proc.as, x.ip); inProbes {
				e.cpu.InProbes++
				continue
			}
		} else {
			e.cpu.Kernel++
		}
		e.cpu.Samples++
		e.s.Sample(t.st, fn, period)
	}
	t.smp.pending = t.smp.pending[:copy(t.smp.pending, t.smp.pending[k:])]
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
	for _, a := range as.areas {
		if ip >= a.base && ip < a.base+a.size {
			return model.None, true
		}
	}
	fn, _ := e.tracedAt(as, ip)
	return fn, false
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
