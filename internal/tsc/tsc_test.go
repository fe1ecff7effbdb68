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
