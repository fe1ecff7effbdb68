package attach

import (
	"testing"
	"time"

	"github.com/profile-dev/profile/attach/internal/perfsample"
	"github.com/profile-dev/profile/attach/internal/stub"
)

func TestNextPause(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		most           int
		since, longest time.Duration
		want           time.Duration
	}{
		{0, ms, drainPauseMax, drainPauseMax},                                 // nothing drained: the longest
		{0, ms, 2 * ms, 2 * ms},                                               // ... as capped
		{drainFill, ms, drainPauseMax, ms},                                    // an eighth of a ring a millisecond: a millisecond
		{drainFill / 2, ms, drainPauseMax, 2 * ms},                            // half as fast: twice as long
		{drainFill / 2, ms, 1500 * time.Microsecond, 1500 * time.Microsecond}, // ... within the cap
		{drainFill * 4, ms, drainPauseMax, drainPause},                        // fast: never under the shortest
		{10, 10 * ms, drainPauseMax, drainPauseMax},                           // nearly idle: never over the longest
		{stub.RingEvents / 8, 3 * ms, drainPauseMax, 3 * ms},                  // drainFill is an eighth of a ring
		{drainFill, 0, drainPauseMax, drainPause},                             // the first pass: no rate yet
		{drainFill * 3 / 2, 3 * ms, drainPauseMax, 2 * ms},                    // rounding down
	} {
		if got := nextPause(c.most, c.since, c.longest); got != c.want {
			t.Errorf("nextPause(%d, %v, %v) = %v, want %v", c.most, c.since, c.longest, got, c.want)
		}
	}
}

// The longest pause leaves a busy thread's sample ring three quarters
// free: the samples of a pause never overflow it, whatever the period.
func TestPauseCap(t *testing.T) {
	if got := pauseCap(0); got != drainPauseMax {
		t.Errorf("not sampling: cap %v, want %v", got, drainPauseMax)
	}
	for _, period := range []time.Duration{10 * time.Microsecond, 100 * time.Microsecond, 250 * time.Microsecond, time.Millisecond, 10 * time.Millisecond} {
		got := pauseCap(period)
		if got < drainPause || got > drainPauseMax {
			t.Errorf("period %v: cap %v outside [%v, %v]", period, got, drainPause, drainPauseMax)
		}
		holds := perfsample.Holds(int64(period), sampleStack)
		if got > drainPause && int(got/period) > holds/4 {
			t.Errorf("period %v: cap %v takes %d samples, the ring holds %d", period, got, got/period, holds)
		}
	}
	if got := pauseCap(250 * time.Microsecond); got >= drainPauseMax || got < 3*time.Millisecond {
		t.Errorf("at the default 250µs: cap %v, want a quarter of a 60-sample ring", got)
	}
}
