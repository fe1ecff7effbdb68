package tsc

import (
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// RawMap converts CLOCK_MONOTONIC_RAW times, the clock of the CPU-time
// samples (attach/internal/perfsample), to ticks, the clock of the probes'
// events, so that a sample can be placed among them. The raw clock is
// not slewed by NTP: with the tsc clocksource it is linear in the
// counter, so a line through two readings far apart is exact to their
// bracketing error. Safe for concurrent use.
type RawMap struct {
	first pair
	line  atomic.Pointer[rawLine]
}

// pair is a raw time and the tick read beside it.
type pair struct {
	ns   int64
	tick uint64
}

// rawLine converts from the latest pair at the rate measured since the
// first.
type rawLine struct {
	at         pair
	ticksPerNs float64
}

// NewRawMap measures the rate over about d; Refine lengthens the
// measurement.
func NewRawMap(d time.Duration) *RawMap {
	m := &RawMap{first: readPair()}
	for t0 := time.Now(); time.Since(t0) < d; {
	}
	p := readPair()
	if p.ns <= m.first.ns || p.tick <= m.first.tick {
		// The raw clock cannot be read (no rate) or did not move: a
		// nominal rate keeps Tick defined.
		m.line.Store(&rawLine{at: p, ticksPerNs: 1})
		return m
	}
	m.line.Store(&rawLine{at: p, ticksPerNs: m.rate(p)})
	return m
}

// Refine reads a new pair and measures the rate from the first pair to
// it: the longer the span, the smaller the pairs' errors weigh.
// Conversions of times near the new pair then carry its error only.
func (m *RawMap) Refine() {
	p := readPair()
	if p.ns <= m.first.ns || p.tick <= m.first.tick {
		return
	}
	m.line.Store(&rawLine{at: p, ticksPerNs: m.rate(p)})
}

// RefineIfOlder refines when the latest pair is older than d. A time
// converts with the rate's error times its distance from that pair: with
// the rate from a first measure of 2 ms, a raw time a second later lands
// some microseconds (up to 7 on a KVM guest) off the counter; from a pair
// at most d old, a few tens of ticks.
func (m *RawMap) RefineIfOlder(d time.Duration) {
	l := m.line.Load()
	if float64(Read()-l.at.tick) < float64(d)*l.ticksPerNs {
		return
	}
	m.Refine()
}

func (m *RawMap) rate(p pair) float64 {
	return float64(p.tick-m.first.tick) / float64(p.ns-m.first.ns)
}

// Tick converts a CLOCK_MONOTONIC_RAW time in nanoseconds to a tick.
func (m *RawMap) Tick(rawNs int64) uint64 {
	l := m.line.Load()
	return l.at.tick + uint64(int64(float64(rawNs-l.at.ns)*l.ticksPerNs))
}

// pairTries is how many readings bracketed takes: an interrupt or a
// preemption inside one widens its bracket, rarely several in a row.
const pairTries = 8

// bracketed calls read between two ticks pairTries times and keeps the
// value read in the narrowest bracket, with the tick at its middle: a
// clock and the counter read one after the other are as far apart as a
// preemption between them lasts. ok is false if read failed.
func bracketed[T any](read func() (T, bool)) (v T, tick uint64, ok bool) {
	bracket := ^uint64(0)
	for range pairTries {
		k0 := Read()
		x, good := read()
		k1 := Read()
		if !good {
			return v, 0, false
		}
		if k1-k0 < bracket {
			bracket, v, tick = k1-k0, x, k0+(k1-k0)/2
		}
	}
	return v, tick, true
}

// readPair reads the raw clock between two ticks (bracketed).
func readPair() pair {
	ns, tick, ok := bracketed(func() (int64, bool) {
		var ts unix.Timespec
		err := unix.ClockGettime(unix.CLOCK_MONOTONIC_RAW, &ts)
		return ts.Nano(), err == nil
	})
	if !ok {
		return pair{}
	}
	return pair{ns: ns, tick: tick}
}
