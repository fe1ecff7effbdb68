// Package tsc reads the CPU's time-stamp counter and converts its ticks to
// a session clock: the inline probes time calls with rdtsc in the target
// (DESIGN §3.4), the tracer with time.Since.
package tsc

import (
	"bytes"
	"errors"
	"os"
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

// Clock converts ticks to nanoseconds since base, the session's zero. The
// rate is measured against the monotonic clock at Calibrate and refined
// by Refine as the session runs (a longer baseline, a better rate).
type Clock struct {
	base      time.Time
	tick0     uint64
	ns0       int64
	nsPerTick float64
}

// Calibrate measures the tick rate over about d.
func Calibrate(base time.Time, d time.Duration) *Clock {
	t0, k0 := time.Now(), Read()
	for time.Since(t0) < d {
	}
	t1, k1 := time.Now(), Read()
	c := &Clock{base: base, tick0: k0, ns0: int64(t0.Sub(base))}
	c.nsPerTick = float64(t1.Sub(t0)) / float64(k1-k0)
	return c
}

// Refine re-measures the rate from the calibration point to now.
func (c *Clock) Refine() {
	t, k := time.Now(), Read()
	if dt := int64(t.Sub(c.base)) - c.ns0; dt > int64(100*time.Millisecond) && k > c.tick0 {
		c.nsPerTick = float64(dt) / float64(k-c.tick0)
	}
}

// Ns converts a tick count read on this machine to the session clock.
func (c *Clock) Ns(tick uint64) int64 {
	return c.ns0 + int64(float64(int64(tick-c.tick0))*c.nsPerTick)
}

// NsPerTick is the current rate.
func (c *Clock) NsPerTick() float64 { return c.nsPerTick }
