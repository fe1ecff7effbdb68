package attach

import (
	"testing"

	"github.com/profile-dev/profile/attach/internal/inline"
	"github.com/profile-dev/profile/attach/internal/stub"
	"github.com/profile-dev/profile/instrument"
)

// TestProbePart: a sample in the probes' code is put in the part that
// holds it — a stub by its offset in the stub code, a function's
// trampoline, a fast path (the function's own or a call site's) — and
// anything else of our areas is the rest.
func TestProbePart(t *testing.T) {
	const (
		s     = 0x7000_0000_1000 // the stub copy
		tramp = 0x7000_0000_4000 // a trampoline, 32 bytes
		fast  = 0x7000_0000_5000 // a fast path, 64 bytes
		site  = 0x7000_0000_6000 // a call site's fast path, 48 bytes
	)
	is := &inlineSpace{Stubs: map[uint64]uint64{0x7000_0000_0000: s}, Patches: map[uint64]*inline.Patch{
		0x401000: {Patch: instrument.Patch{Tramp: make([]byte, 32)}, TrampAt: tramp},
	}}
	as := &space{inl: is, fast: &fastCounts{fns: map[int]*fastFn{3: {at: fast, end: fast + 64, sites: [][2]uint64{{site, site + 48}}}}}}
	cases := []struct {
		ip   uint64
		part string
		off  int
	}{
		{s, partEntry, 0},
		{s + stub.Via - 1, partEntry, stub.Via - 1},
		{s + stub.Via, partVia, stub.Via},
		{s + stub.ViaCall, partVia, stub.ViaCall},
		{s + stub.RetStub, partReturn, stub.RetStub},
		{s + stub.Count + 5, partCount, stub.Count + 5},
		{s + stub.ExitSite, partExit, stub.ExitSite},
		{s + stub.TailSite + 1, partTail, stub.TailSite + 1},
		{s + uint64(stub.Len()), partOther, -1},
		{tramp, partTramp, -1},
		{tramp + 31, partTramp, -1},
		{tramp + 32, partOther, -1},
		{fast + 63, partFast, -1},
		{site, partFast, -1},
		{site + 48, partOther, -1},
	}
	for _, c := range cases {
		if part, off := probePart(as, c.ip); part != c.part || off != c.off {
			t.Errorf("%#x: %s at %#x, want %s at %#x", c.ip, part, off, c.part, c.off)
		}
	}
	var st ProbeCodeStats
	for _, c := range cases {
		st.count(probePart(as, c.ip))
	}
	if st.Parts[partOther] != 3 || st.Parts[partEntry] != 2 || len(st.StubOffsets) != 8 || st.StubOffsets[stub.RetStub] != 1 {
		t.Errorf("counted %v, offsets %v", st.Parts, st.StubOffsets)
	}
}
