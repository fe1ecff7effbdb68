package attach

import (
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
	is := as.inl
	if is == nil {
		return partOther, -1
	}
	for _, s := range is.Stubs {
		if ip < s || ip >= s+uint64(stub.Len()) {
			continue
		}
		off := int(ip - s)
		return StubPart(off), off
	}
	for _, p := range is.Patches {
		if p.TrampAt != 0 && ip >= p.TrampAt && ip < p.TrampAt+uint64(len(p.Patch.Tramp)) {
			return partTramp, -1
		}
	}
	if as.fast != nil {
		for _, f := range as.fast.fns {
			in := ip >= f.at && ip < f.end
			for _, r := range f.sites {
				in = in || ip >= r[0] && ip < r[1]
			}
			if in {
				return partFast, -1
			}
		}
	}
	return partOther, -1
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
