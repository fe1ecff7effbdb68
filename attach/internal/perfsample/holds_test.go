package perfsample

import (
	"os"
	"testing"
)

// Holds is the ring's size over a record's, for the ring Open maps.
func TestHolds(t *testing.T) {
	page := os.Getpagesize()
	for _, c := range []struct {
		period int64
		stack  int
		pages  int
	}{
		{250_000, 4096, maxRingPages},    // a second of 4-KiB samples: more than the bound
		{1_000_000_000, 0, 1},            // one small sample a second: a page
		{10_000_000, 4096, maxRingPages}, // 100 a second of 4 KiB: 400 KiB, bounded
	} {
		want := c.pages * page / recordSize(c.stack)
		if got := Holds(c.period, c.stack); got != want || got <= 0 {
			t.Errorf("Holds(%d, %d) = %d, want %d (%d pages)", c.period, c.stack, got, want, c.pages)
		}
	}
	if got := Holds(250_000, 4096); got < 50 || got > 70 {
		t.Errorf("Holds(250µs, 4 KiB) = %d, want some 60", got)
	}
}
