package tsc

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A raw time read beside the counter converts to within a few
// microseconds of it, once the rate is measured over 100 ms, and goes on
// doing so as the session goes on with no further Refine.
func TestRawMapMeetsTheCounter(t *testing.T) {
	if Invariant() != nil {
		t.Skip("no invariant TSC on this machine")
	}
	m := NewRawMap(5 * time.Millisecond)
	time.Sleep(100 * time.Millisecond)
	m.Refine()
	nsPerTick := 1 / m.line.Load().ticksPerNs
	const tolerance = 3 * time.Microsecond
	for _, after := range []time.Duration{0, 10 * time.Millisecond, 100 * time.Millisecond} {
		time.Sleep(after)
		p := readPair()
		got := m.Tick(p.ns)
		off := time.Duration(float64(int64(got-p.tick)) * nsPerTick)
		t.Logf("%v after the refine: raw→tick off by %v (%d ticks)", after, off, int64(got-p.tick))
		if off < -tolerance || off > tolerance {
			t.Errorf("%v after the refine: raw %d ns converts to tick %d, the counter read %d: off by %v", after, p.ns, got, p.tick, off)
		}
	}
}

// Later raw times convert to later ticks, across a Refine too.
func TestRawMapIsMonotone(t *testing.T) {
	if Invariant() != nil {
		t.Skip("no invariant TSC on this machine")
	}
	m := NewRawMap(time.Millisecond)
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC_RAW, &ts); err != nil {
		t.Fatal(err)
	}
	now := ts.Nano()
	for i, ns := range []int64{now - 1e6, now - 1000, now, now + 1, now + 1e6, now + 1e9} {
		if i > 0 && m.Tick(ns) <= m.Tick(ns-1) {
			t.Errorf("raw %d ns converts to tick %d, not after %d ns's %d", ns, m.Tick(ns), ns-1, m.Tick(ns-1))
		}
	}
	before := m.Tick(now)
	time.Sleep(20 * time.Millisecond)
	m.Refine()
	// A refine moves a past time by the pairs' errors only: well under a
	// microsecond's worth of ticks at any counter rate above 1 GHz.
	if d := int64(m.Tick(now) - before); d < -3000 || d > 3000 {
		t.Errorf("a refine moved raw %d ns from tick %d to %d", now, before, m.Tick(now))
	}
}

// A map first measured over 2 ms and refined whenever its latest pair is
// 10 ms old converts raw times to within a microsecond of the counter
// over the next second; left alone, it may drift some (7µs seen on a KVM
// guest after a second).
func TestRawMapRefinedIfOlder(t *testing.T) {
	if Invariant() != nil {
		t.Skip("no invariant TSC on this machine")
	}
	m := NewRawMap(2 * time.Millisecond)
	nsPerTick := 1 / m.line.Load().ticksPerNs
	// A line younger than d stays; an older one is read again.
	first := m.line.Load()
	if m.RefineIfOlder(time.Hour); m.line.Load() != first {
		t.Fatal("a line younger than an hour was refined")
	}
	time.Sleep(2 * time.Millisecond)
	if m.RefineIfOlder(time.Millisecond); m.line.Load() == first {
		t.Fatal("a line older than a millisecond was not refined")
	}
	const tolerance = time.Microsecond
	for start := time.Now(); time.Since(start) < time.Second; {
		time.Sleep(3 * time.Millisecond)
		m.RefineIfOlder(10 * time.Millisecond)
		p := readPair()
		if off := time.Duration(float64(int64(m.Tick(p.ns)-p.tick)) * nsPerTick); off < -tolerance || off > tolerance {
			t.Fatalf("%v in: raw %d ns converts to tick %d, the counter read %d: off by %v", time.Since(start), p.ns, m.Tick(p.ns), p.tick, off)
		}
	}
}
