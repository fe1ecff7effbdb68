// Package tsc reads the CPU's time-stamp counter and converts its ticks to
// a session clock: the inline probes time calls with rdtsc in the target
// (docs/design.md, Timers), the tracer with time.Since.
package tsc

import (
	"bytes"
	"errors"
	"os"
	"sync/atomic"
	"time"
)

// Read returns the time-stamp counter.
func Read() uint64

// ErrUnreliable means the counter does not tick at a constant rate on
// every CPU (no constant_tsc and nonstop_tsc): inline probes are refused.
var ErrUnreliable = errors.New("the CPU has no invariant time-stamp counter (constant_tsc, nonstop_tsc)")

// Invariant tells from /proc/cpuinfo whether the counter is usable as a
// clock across CPUs and idle states.
func Invariant() error {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return err
	}
	for _, f := range []string{"constant_tsc", "nonstop_tsc"} {
		if !bytes.Contains(b, []byte(" "+f)) {
			return ErrUnreliable
		}
	}
	return nil
}

// Clock converts ticks to nanoseconds since base, the session's zero, as
// a line of segments: the rate is measured against the monotonic clock at
// Calibrate, and each Refine starts a new segment where the last one is at
// that moment, with a rate that meets the monotonic clock a second later
// (then on at the measured rate).
// So the conversion never jumps: a frame entered before a Refine and left
// after it does not last less than its callees (a new rate applied to
// every tick from the calibration on moved later ticks by tens of
// microseconds, back or forth). A tick keeps the time it had when it was
// read, whenever it is converted. Safe for concurrent use.
type Clock struct {
	base  time.Time
	t0    time.Time // the calibration's start: the rate's baseline
	tick0 uint64
	segs  atomic.Pointer[[]segment]
}

// segment converts the ticks from tick on: ns + (t - tick) * nsPerTick.
type segment struct {
	tick      uint64
	ns        int64
	nsPerTick float64
}

// converge is how long a Refine takes to bring the conversion back to the
// monotonic clock.
const converge = time.Second

// Calibrate measures the tick rate over about d.
func Calibrate(base time.Time, d time.Duration) *Clock {
	t0, k0 := readNow()
	for time.Since(t0) < d {
	}
	t1, k1 := readNow()
	c := &Clock{base: base, t0: t0, tick0: k0}
	c.segs.Store(&[]segment{{tick: k0, ns: int64(t0.Sub(base)), nsPerTick: float64(t1.Sub(t0)) / float64(k1-k0)}})
	return c
}

// Refine re-measures the rate from the calibration point to now and
// starts a segment at now that reaches the monotonic clock in converge.
// Callers serialize Refine.
func (c *Clock) Refine() {
	t, k := readNow()
	dt := t.Sub(c.t0)
	if dt <= 100*time.Millisecond || k <= c.tick0 {
		return
	}
	rate := float64(dt) / float64(k-c.tick0)
	segs := *c.segs.Load()
	at := c.Ns(k)
	want := int64(t.Sub(c.base))
	// Cover the distance to the monotonic clock over converge ticks'
	// worth of time, but never run backwards or at twice the speed.
	ticks := float64(converge) / rate
	step := (float64(want-at) + float64(converge)) / ticks
	step = min(max(step, rate/2), rate*2)
	// Then on at the measured rate, should no Refine come.
	end := k + uint64(ticks)
	next := append(segs[:len(segs):len(segs)],
		segment{tick: k, ns: at, nsPerTick: step},
		segment{tick: end, ns: at + int64(ticks*step), nsPerTick: rate})
	c.segs.Store(&next)
}

// readNow reads the monotonic clock between two ticks (bracketed): at
// 20 ms of calibration on a busy VM, a time and a tick read one after the
// other put the rate 0.8% off (a clock 1.3 ms behind 170 ms later,
// TestClockFollowsMonotonicTime's flake).
func readNow() (time.Time, uint64) {
	t, tick, _ := bracketed(func() (time.Time, bool) { return time.Now(), true })
	return t, tick
}

// Ns converts a tick count read on this machine to the session clock.
func (c *Clock) Ns(tick uint64) int64 {
	segs := *c.segs.Load()
	i := len(segs) - 1
	// Recent ticks are the rule: search back from the newest segment.
	for i > 0 && int64(tick-segs[i].tick) < 0 {
		i--
	}
	s := segs[i]
	return s.ns + int64(float64(int64(tick-s.tick))*s.nsPerTick)
}

// NsPerTick is the measured rate.
func (c *Clock) NsPerTick() float64 {
	segs := *c.segs.Load()
	return segs[len(segs)-1].nsPerTick
}
