package attach

import (
	"testing"

	"github.com/profile-dev/profile/attach/internal/procfs"
)

// The share of a trap stop's cost held before the tracer saw it, from the
// thread's scheduler counters since it was let go; the figures are the
// kind our AMD EPYC VM gives (a round of measureStop 17 us, 8 of them on a
// CPU; a stop in the loop 100 us).
func TestStopCost(t *testing.T) {
	const wake, kernel = 17000, 8000
	for _, c := range []struct {
		name string
		wall int64
		d    procfs.SchedDelta
		ok   bool
		want int64
	}{
		{"unread: half the calibrated wake", 90000, procfs.SchedDelta{}, false, 8500},
		{"first stop, no time since it was let go", -1, procfs.SchedDelta{Ran: 60000, Queued: 0, Slices: 1}, true, 8500},
		// 90 us since let go: 51 of work, 8 of the kernel's, 31 off a CPU.
		{"ran once: off a CPU and the kernel's, less the wake taken", 90000, procfs.SchedDelta{Ran: 59000, Queued: 0, Slices: 1}, true, 31000 + 8000 - 8500},
		{"ran once after waiting for a CPU", 95000, procfs.SchedDelta{Ran: 59000, Queued: 5000, Slices: 1}, true, 31000 + 5000 + 8000 - 8500},
		{"blocked or preempted: the calibrated wake and the wait", 900000, procfs.SchedDelta{Ran: 59000, Queued: 5000, Slices: 2}, true, 8500 + 5000},
		{"ran less than the kernel's share", 30000, procfs.SchedDelta{Ran: 2000, Queued: 0, Slices: 1}, true, 28000 + 2000 - 8500},
		{"counters ahead of the clock", 50000, procfs.SchedDelta{Ran: 60000, Queued: 0, Slices: 1}, true, 0},
	} {
		if got := stopCost(c.wall, c.d, c.ok, wake, kernel); got != c.want {
			t.Errorf("%s: stopCost = %d, want %d", c.name, got, c.want)
		}
	}
}
