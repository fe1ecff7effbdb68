package attach

import (
	"testing"

	"github.com/profile-dev/profile/attach/internal/stub"
	"github.com/profile-dev/profile/instrument"
)

// A fast path's counters are a line of the memfd: a word for each of its
// call sites.
func TestFastCountLine(t *testing.T) {
	if instrument.FastSlots*8 != stub.FastCountLine {
		t.Errorf("%d call sites a fast path, %d bytes of counters", instrument.FastSlots, stub.FastCountLine)
	}
}
