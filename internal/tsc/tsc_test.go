package tsc

import (
	"testing"
	"time"
)

// Ticks converted by a calibrated clock follow the monotonic clock.
func TestClockFollowsMonotonicTime(t *testing.T) {
	if Invariant() != nil {
		t.Skip("no invariant TSC on this machine")
	}
	base := time.Now()
	c := Calibrate(base, 20*time.Millisecond)
	time.Sleep(150 * time.Millisecond)
	c.Refine()
	want := int64(time.Since(base))
	got := c.Ns(Read())
	if d := got - want; d < -int64(time.Millisecond) || d > int64(time.Millisecond) {
		t.Fatalf("clock %d ns, monotonic %d ns: off by %d ns", got, want, d)
	}
}

// A Refine never moves a converted time: a tick converted before it and
// again after it reads the same, and later ticks never read earlier than
// earlier ones, across many refines (the rate measured over a longer
// baseline each time).
func TestRefineKeepsTimesInPlace(t *testing.T) {
	if Invariant() != nil {
		t.Skip("no invariant TSC on this machine")
	}
	base := time.Now()
	c := Calibrate(base, time.Millisecond) // a rough rate: refines correct it
	var ticks []uint64
	var before []int64
	for range 8 {
		time.Sleep(40 * time.Millisecond)
		k := Read()
		ticks = append(ticks, k)
		before = append(before, c.Ns(k))
		c.Refine()
	}
	time.Sleep(150 * time.Millisecond)
	c.Refine()
	for i, k := range ticks {
		if got := c.Ns(k); got != before[i] {
			t.Errorf("tick %d read %d ns before a refine, %d after", i, before[i], got)
		}
		if i > 0 && c.Ns(k) < c.Ns(ticks[i-1]) {
			t.Errorf("tick %d reads before tick %d", i, i-1)
		}
	}
	// Synthetic segments: a tick at each boundary and between them.
	for k := ticks[0]; k < ticks[len(ticks)-1]; k += (ticks[len(ticks)-1] - ticks[0]) / 1000 {
		if c.Ns(k+1) < c.Ns(k) {
			t.Fatalf("tick %d reads after tick %d", k, k+1)
		}
	}
}
