package attach

import (
	"testing"
	"time"

	"github.com/profile-dev/profile/attach/internal/stub"
)

func TestNextPause(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		most  int
		since time.Duration
		want  time.Duration
	}{
		{0, ms, drainPauseMax},                // nothing drained: the longest
		{drainFill, ms, ms},                   // an eighth of a ring a millisecond: a millisecond
		{drainFill / 2, ms, 2 * ms},           // half as fast: twice as long
		{drainFill * 4, ms, drainPause},       // fast: never under the shortest
		{10, 10 * ms, drainPauseMax},          // nearly idle: never over the longest
		{stub.RingEvents / 8, 3 * ms, 3 * ms}, // drainFill is an eighth of a ring
		{drainFill, 0, drainPause},            // the first pass: no rate yet
		{drainFill * 3 / 2, 3 * ms, 2 * ms},   // rounding down
	} {
		if got := nextPause(c.most, c.since); got != c.want {
			t.Errorf("nextPause(%d, %v) = %v, want %v", c.most, c.since, got, c.want)
		}
	}
}
