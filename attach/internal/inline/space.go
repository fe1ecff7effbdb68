// Package inline holds the tracer's side of the inline probes (docs/design.md,
// Inline probes): per address space, where the stubs' data block and rings
// are in the target, the tracer's own mapping of the rings, the patched
// functions and their trampolines, and the table by which the stubs find
// a thread's ring. The stubs' code and layout are attach/internal/stub; the
// engine does the ptrace and the injection, and hands this package a
// writer for the target's memory where a change must reach it.
//
// T is the engine's thread: the table says which one owns each ring.
package inline

import (
	"cmp"
	"encoding/binary"
	"maps"
	"slices"
	"sync/atomic"

	"github.com/profile-dev/profile/attach/internal/stub"
	"github.com/profile-dev/profile/instrument"
)

// Space is the tracer's side of one address space's inline probes.
type Space[T any] struct {
	Data    uint64 // the data block in the target
	DataLen uint64 // its size: side records make it bigger
	Rings   uint64 // the rings' mapping in the target
	Mem     []byte // the tracer's mapping of the same memfd
	RetStub uint64
	Stubs   map[uint64]uint64 // area base -> its entry stub copy
	Patches map[uint64]*Patch
	// Sites: every call site a patch re-aimed, by its address (SetSite
	// adds one).
	Sites   map[uint64]instrument.SiteBytes
	siteMax int // the most bytes a site ever changed: how far back one may reach
	// sitePages lists the addresses of Sites by page (address >> 12), so
	// that Overlay looks only at the pages it covers: built from Sites
	// when nil (a new or forked space); an address whose site was deleted
	// since is skipped.
	sitePages map[uint64][]uint64
	Tramps    [][2]uint64 // trampoline ranges: a thread inside one is moved out at detach
	Table[T]
	// Unregistered is the stubs' count of calls by threads without a ring,
	// as last read.
	Unregistered int64
	DropsSeen    uint64 // events the stubs dropped, as last noticed
}

// Patch is one function's patch: at its entry (Patch), or at the branches
// to it (Sites; Patch then replaces no byte).
type Patch struct {
	Patch   instrument.Patch
	Sites   []instrument.SiteBytes
	Fn      int
	TrampAt uint64 // where its trampoline is
	// Moved: the bytes at Patch.At its trampoline relocated, as the text
	// held them (a call site re-aimed there is ours): a second copy of
	// them runs in the counting probe's fast path.
	Moved []byte
	// Exits: its returns' exit probes (also in Sites), put back when it
	// moves to the counting probe.
	Exits []instrument.SiteBytes
	// ExitBodies: the epilogue instructions its exit trampolines run, its
	// own time.
	ExitBodies [][2]uint64
}

// Changes lists every change the probes made to the text (each entry
// patch, and each call site re-aimed: Sites, a function's probe at its
// call sites, a call site's own counting fast path), at its address, as
// it was and as the probe has it, in the order to put them back: the
// sites first, then the entry patches, then the sites inside an entry
// patch's bytes. A site's fast path runs its function's first
// instructions and jumps back into the function's entry patch (to the
// call it may keep in place, the middle of an instruction once the
// function has its own bytes back), so a tracer killed between two of
// these writes must leave no site whose function is put back (redis
// died of SIGILL at dictFetchValue+6 so, its caller's call still
// re-aimed). A site inside an entry patch (re-aimed before the patch
// went in, relocated by its trampoline) goes back with the patch, whose
// original bytes hold it: put back before, it would write into a patch
// still in use.
func (s *Space[T]) Changes() []instrument.SiteBytes {
	// The entry patches' byte ranges, by address: a site is looked up
	// among them, not checked against each (thousands of both).
	var spans []instrument.Patch
	for _, p := range s.Patches {
		if p.Patch.Len > 0 {
			spans = append(spans, p.Patch)
		}
	}
	slices.SortFunc(spans, func(a, b instrument.Patch) int { return cmp.Compare(a.At, b.At) })
	var sites, inside, out []instrument.SiteBytes
	for _, c := range s.Sites {
		if inSpans(spans, c.At, len(c.New)) {
			inside = append(inside, c)
		} else {
			sites = append(sites, c)
		}
	}
	out = append(out, sites...)
	for _, p := range spans {
		out = append(out, instrument.SiteBytes{At: p.At, Orig: p.Orig, New: p.Jump})
	}
	return append(out, inside...)
}

// inSpans tells whether any of the n bytes at at lies in one of spans,
// entry patches sorted by address. They do not overlap: the last one to
// begin before the n bytes end is the only one that can reach them.
func inSpans(spans []instrument.Patch, at uint64, n int) bool {
	i, _ := slices.BinarySearchFunc(spans, at+uint64(n), func(p instrument.Patch, end uint64) int { return cmp.Compare(p.At, end) })
	return i > 0 && spans[i-1].At+uint64(spans[i-1].Len) > at
}

// Replaced tells whether entry patch p replaced any of the n bytes at at.
func (p *Patch) Replaced(at uint64, n int) bool {
	return p.Patch.Len > 0 && at < p.Patch.At+uint64(p.Patch.Len) && at+uint64(n) > p.Patch.At
}

// HasSite tells whether a probe re-aimed the branch at at.
func (s *Space[T]) HasSite(at uint64) bool {
	_, ok := s.Sites[at]
	return ok
}

// SetSite records site c, re-aimed by a patch.
func (s *Space[T]) SetSite(c instrument.SiteBytes) {
	s.Sites[c.At] = c
	s.siteMax = max(s.siteMax, len(c.New))
	if s.sitePages != nil {
		s.indexSite(c.At)
	}
}

// indexSite lists the site at at under its page, once.
func (s *Space[T]) indexSite(at uint64) {
	if pg := at >> 12; !slices.Contains(s.sitePages[pg], at) {
		s.sitePages[pg] = append(s.sitePages[pg], at)
	}
}

// Overlay writes onto b, the file's bytes at addr, the call sites patches
// re-aimed there: what the text holds, ours apart from entry patches.
// It looks only at the sites of the pages b covers (and of the one before,
// a site there may reach into b): every patched function overlays its
// code, and with exit probes a large program has tens of thousands of
// sites (a look at each address of a function took a tenth of each gcc
// process's set-up; at every site, a fifth of Python's).
func (s *Space[T]) Overlay(addr uint64, b []byte) {
	if len(s.Sites) == 0 || len(b) == 0 {
		return
	}
	if s.sitePages == nil {
		s.sitePages = map[uint64][]uint64{}
		for at := range s.Sites {
			s.indexSite(at)
		}
	}
	end := addr + uint64(len(b))
	from := addr - min(addr, uint64(s.siteMax))
	for pg := from >> 12; pg <= (end-1)>>12; pg++ {
		for _, at := range s.sitePages[pg] {
			c, ok := s.Sites[at]
			if !ok || at+uint64(len(c.New)) <= addr || at >= end {
				continue
			}
			for i, v := range c.New {
				if a := at + uint64(i); a >= addr && a < end {
					b[a-addr] = v
				}
			}
		}
	}
}

// Writer writes b at addr in the target.
type Writer func(addr uint64, b []byte) error

// New is a space whose data block (size bytes) is at data.
func New[T any](data, size uint64) *Space[T] {
	return &Space[T]{Data: data, DataLen: size, Stubs: map[uint64]uint64{}, Patches: map[uint64]*Patch{},
		Sites: map[uint64]instrument.SiteBytes{}, Table: newTable[T]()}
}

// Fork is the space of a process forked from s's: the same addresses, a
// copy of s's tables, every slot free but keep (-1: none), which the
// forking thread held; its rings are mapped afresh (Mem nil).
func (s *Space[T]) Fork(keep int) *Space[T] {
	c := &Space[T]{Data: s.Data, DataLen: s.DataLen, Rings: s.Rings, RetStub: s.RetStub,
		Stubs: maps.Clone(s.Stubs), Patches: maps.Clone(s.Patches), Sites: maps.Clone(s.Sites), Tramps: slices.Clone(s.Tramps),
		Table: newTable[T]()}
	c.keys, c.used, c.next, c.siteMax = maps.Clone(s.keys), s.used, s.next, s.siteMax
	for slot := range s.next {
		if slot != keep {
			c.free = append(c.free, slot)
		}
	}
	return c
}

// State is the address of slot's thread state in the target.
func (s *Space[T]) State(slot int) uint64 {
	return s.Data + stub.DStates + uint64(slot)*stub.StateSize
}

// Ring is slot's ring in the tracer's mapping.
func (s *Space[T]) Ring(slot int) Ring {
	return Ring{mem: s.Mem[slot*stub.RingStride : (slot+1)*stub.RingStride]}
}

// Inside tells whether pc is in an entry stub copy, a trampoline, or a
// call an entry patch keeps in place (instrument.Patch.InPlace): bytes
// that hold another instruction once the patch is gone.
func (s *Space[T]) Inside(pc uint64) bool {
	if s.inPlaceAt(pc) {
		return true
	}
	for _, a := range s.Stubs {
		if pc >= a && pc < a+uint64(stub.Len()) {
			return true
		}
	}
	for _, r := range s.Tramps {
		if pc >= r[0] && pc < r[1] {
			return true
		}
	}
	return false
}

// entry is the address of the target's table entry idx (key, then state).
func (s *Space[T]) entry(idx int) uint64 { return s.Data + stub.DTable + uint64(idx)*16 }

// ReadCounters reads the stubs' process-wide counters with read while the
// process is there to read (a thread's exit, a detach).
func (s *Space[T]) ReadCounters(read func(addr uint64, b []byte) error) {
	var b [8]byte
	if read(s.Data+stub.DUnregistered, b[:]) == nil {
		s.Unregistered = int64(binary.LittleEndian.Uint64(b[:]))
	}
}

// FastCalls are the counters of fast path line (attach/fastcount.go) as
// they stand: a word per call site, written by the fast paths' owner thread.
func (s *Space[T]) FastCalls(line int) [stub.FastCountLine / 8]uint64 {
	var out [stub.FastCountLine / 8]uint64
	off, mem := stub.FastCounts+line*stub.FastCountLine, Ring{mem: s.Mem}
	for k := range out {
		out[k] = atomic.LoadUint64(mem.word(off + 8*k))
	}
	return out
}

// InPlaceCalls lists the calls entry patches keep in place: the bytes of
// each, [lo, hi), and where the call it stands for starts in the original
// bytes: a thread about to run it runs that one once the bytes are back.
func (s *Space[T]) InPlaceCalls() [][3]uint64 {
	var out [][3]uint64
	for _, p := range s.Patches {
		if c, ok := p.InPlaceCall(); ok {
			out = append(out, c)
		}
	}
	return out
}

// inPlaceAt tells whether pc is in a call an entry patch keeps in place.
func (s *Space[T]) inPlaceAt(pc uint64) bool {
	for _, p := range s.Patches {
		if c, ok := p.InPlaceCall(); ok && pc >= c[0] && pc < c[1] {
			return true
		}
	}
	return false
}

// InPlaceCall is the call p keeps in place, as InPlaceCalls lists it.
func (p *Patch) InPlaceCall() ([3]uint64, bool) {
	n := uint64(p.Patch.InPlace)
	end := p.Patch.At + uint64(p.Patch.Len)
	return [3]uint64{end - n, end, end - 5}, n > 0
}
