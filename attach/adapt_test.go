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
