package attach

import (
	"cmp"
	"slices"

	"github.com/profile-dev/profile/attach/internal/stub"
)

// Where the samples that fell in the probes' own code lie (--stats): the
// probes' cost split by the code that pays it, to tell a cost of the
// stubs' own work from one the machine charges to whatever runs first
// after a return or a system call (a return stub's first instruction).

// ProbeCodeStats counts the CPU samples in the probes' code by part, and
// those in the stub code by their offset in it (in probe.bin, as
// `objdump -d` of inlinecode/probe.S numbers them).
type ProbeCodeStats struct {
	Parts       map[string]int64
	StubOffsets map[int]int64
	// InWaiting fell while a waiting call was the innermost open frame:
	// the end of its entry stub and its return up to its exit event, the
	// code that runs first after its system call.
	InWaiting int64
	// BehindExitClock were taken on the instruction behind an exit
	// stub's clock read, and given to the program (behindExitClock): not
	// in the probes' code's count nor in Parts.
	BehindExitClock int64
}

// behindExitClock tells whether a sample at offset off of the
// stub code, in part, is the program's time, not the probes': the one
// behind a clock read of the exit or return stub. A clock read waits
// for the work before it, and a sample lands behind it for that time
// (on the AMD EPYC VM a loop of 64 dependent additions and one rdtsc
// has 22-24% of its samples there, pinned or not, while the rdtsc adds
// 2.5-4% to its time). At a return that work is the
// program's, pending: after a system call the stall that perf of the
// untraced program finds behind the returns above it, in their callers'
// code (docs/design.md, Sampled times). Its time comes after the exit's
// event, so it goes to the caller's context, as perf gives it.
func behindExitClock(part string, off int) bool {
	return (part == partExit || part == partReturn) && stub.AfterEventClock(off)
}

// The parts of the probes' code.
const (
	partEntry  = "entry stub"
	partVia    = "via call"
	partReturn = "return stub"
	partCount  = "counting stub"
	partExit   = "exit stub"
	partTail   = "tail stub"
	partTramp  = "trampolines"
	partFast   = "fast paths"
	partOther  = "exit trampolines, call-site paths"
)

// probePart tells which part of the probes' code of as holds ip, and its
// offset in the stub code (-1 outside it). ip lies in one of our areas.
func probePart(as *space, ip uint64) (string, int) {
	if as.inl == nil {
		return partOther, -1
	}
	for _, s := range as.inl.Stubs {
		if ip >= s && ip < s+uint64(stub.Len()) {
			off := int(ip - s)
			return StubPart(off), off
		}
	}
	as.indexTramps()
	i, _ := slices.BinarySearchFunc(as.parts, ip+1, func(c codePart, t uint64) int { return cmp.Compare(c.lo, t) })
	if i > 0 && ip < as.parts[i-1].hi {
		return as.parts[i-1].part, -1
	}
	return partOther, -1
}

// codePart is a range of the probes' code and the part it is.
type codePart struct {
	lo, hi uint64
	part   string
}

// codeParts is the trampolines and the fast paths of as, by address (a
// sample in the instructions a trampoline relocated is its function's:
// relocatedAt finds it first).
func codeParts(as *space) []codePart {
	var out []codePart
	for _, p := range as.inl.Patches {
		if p.TrampAt != 0 {
			out = append(out, codePart{p.TrampAt, p.TrampAt + uint64(len(p.Patch.Tramp)), partTramp})
		}
	}
	if as.fast != nil {
		for _, f := range as.fast.fns {
			out = append(out, codePart{f.at, f.end, partFast})
			for _, r := range f.sites {
				out = append(out, codePart{r[0], r[1], partFast})
			}
		}
	}
	slices.SortFunc(out, func(a, b codePart) int { return cmp.Compare(a.lo, b.lo) })
	return out
}

// count adds one sample at part, off.
func (c *ProbeCodeStats) count(part string, off int) {
	if c.Parts == nil {
		c.Parts, c.StubOffsets = map[string]int64{}, map[int]int64{}
	}
	c.Parts[part]++
	if off >= 0 {
		c.StubOffsets[off]++
	}
}

// StubInst is the instruction at offset off of the stub code, in Intel
// syntax ("" if none starts there).
func StubInst(off int) string { return stub.Inst(off) }

// StubPart names the part of the stub code at offset off.
func StubPart(off int) string {
	switch {
	case off >= stub.TailSite:
		return partTail
	case off >= stub.ExitSite:
		return partExit
	case off >= stub.Count:
		return partCount
	case off >= stub.RetStub:
		return partReturn
	case off >= stub.Via:
		return partVia
	}
	return partEntry
}
