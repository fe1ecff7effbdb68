package cmd

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/profile-dev/profile/attach"
)

// stubOffsetsShown is how many of the stub code's hottest offsets --stats
// lists.
const stubOffsetsShown = 8

// writeProbeCode says where the n samples in the probes' code lie: by
// part, and the stub code's hottest offsets (probe.bin's, as objdump of
// attach/internal/stub/inlinecode/probe.S numbers them); then how many
// samples in that code were given to the program.
func writeProbeCode(w io.Writer, c attach.ProbeCodeStats, n int64) {
	writeProbeParts(w, c, n)
	if c.BehindExitClock > 0 {
		fmt.Fprintf(w, "  behind exit clocks: %d (the program's, given to the callers: a clock read waits for the returning code's work)\n", c.BehindExitClock)
	}
}

// writeProbeParts writes the parts and hottest offsets of writeProbeCode.
func writeProbeParts(w io.Writer, c attach.ProbeCodeStats, n int64) {
	if n == 0 || len(c.Parts) == 0 {
		return
	}
	pct := func(k int64) string { return fmt.Sprintf("%.1f%%", 100*float64(k)/float64(n)) }
	parts := slices.SortedFunc(maps.Keys(c.Parts), func(a, b string) int {
		return cmp.Or(cmp.Compare(c.Parts[b], c.Parts[a]), cmp.Compare(a, b))
	})
	var out []string
	for _, p := range parts {
		out = append(out, p+" "+pct(c.Parts[p]))
	}
	fmt.Fprintf(w, "  probes' code:      %s\n", strings.Join(out, ", "))
	if c.InWaiting > 0 {
		fmt.Fprintf(w, "  in waiting calls:  %s (a waiting call innermost: its entry's end and its return, first after its system call)\n", pct(c.InWaiting))
	}
	offs := slices.SortedFunc(maps.Keys(c.StubOffsets), func(a, b int) int {
		return cmp.Or(cmp.Compare(c.StubOffsets[b], c.StubOffsets[a]), cmp.Compare(a, b))
	})
	out = out[:0]
	for _, o := range offs[:min(len(offs), stubOffsetsShown)] {
		where := attach.StubPart(o)
		if inst := attach.StubInst(o); inst != "" {
			where += ": " + inst
		}
		out = append(out, fmt.Sprintf("+%#x %s (%s)", o, pct(c.StubOffsets[o]), where))
	}
	if len(out) > 0 {
		fmt.Fprintf(w, "  hottest in stubs:  %s\n", strings.Join(out, ", "))
	}
}
