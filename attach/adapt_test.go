package attach

import (
	"testing"
	"time"
)

// A function moves to counting once judged (2,000 calls) when its calls
// average under 1µs, or, called 100,000 times, under 2µs.
func TestTooShort(t *testing.T) {
	for _, c := range []struct {
		calls int64
		mean  time.Duration
		want  bool
	}{
		{1999, 10 * time.Nanosecond, false},
		{2000, 10 * time.Nanosecond, true},
		{2000, 999 * time.Nanosecond, true},
		{2000, time.Microsecond, false},
		{99_999, 1500 * time.Nanosecond, false},
		{100_000, 1500 * time.Nanosecond, true},
		{100_000, 2 * time.Microsecond, false},
		{5_000_000, 10 * time.Microsecond, false},
	} {
		if got := (shortCall{c.calls, c.mean}).tooShort(); got != c.want {
			t.Errorf("%d calls of %v: tooShort %v, want %v", c.calls, c.mean, got, c.want)
		}
	}
}

// Looks come at 20 ms, then twice as late each time nothing moves; early
// once the rings bring 200,000 events since the last look (a load that
// starts after a quiet while), but never within 20 ms of it, and the next
// early one takes twice as many events if that look moved nothing. A look
// that moves some starts both over.
func TestLookDue(t *testing.T) {
	e := &engine{}
	if !e.lookDue() {
		t.Fatal("the first look is not due at once")
	}
	e.looked(false)
	if e.lookDue() || e.lookGap != 2*adaptFirst {
		t.Fatalf("due right after a look (gap %v)", e.lookGap)
	}
	e.stats.Rings.Events += adaptEvents
	if e.lookDue() {
		t.Error("due by events within adaptFirst of the last look")
	}
	e.lastLook = e.lastLook.Add(-adaptFirst)
	if !e.lookDue() {
		t.Fatal("not due after adaptEvents events")
	}
	e.looked(false)
	if e.eventGap != 2*adaptEvents {
		t.Errorf("event gap %d after an early look that moved nothing, want %d", e.eventGap, 2*adaptEvents)
	}
	e.stats.Rings.Events += adaptEvents
	e.lastLook = e.lastLook.Add(-adaptFirst)
	if e.lookDue() {
		t.Error("due early with half the events the gap asks")
	}
	e.looked(true)
	if e.eventGap != adaptEvents || e.lookGap != adaptFirst {
		t.Errorf("after a look that moved some: event gap %d, gap %v; want %d, %v", e.eventGap, e.lookGap, adaptEvents, adaptFirst)
	}
}
