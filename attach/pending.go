package attach

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"

	"github.com/profile-dev/profile/attach/internal/ptrace"
	"github.com/profile-dev/profile/instrument"
)

// pending holds the code a scan of a still space writes (space.sole:
// nothing runs in its memory) until the scan ends: the trampolines and
// the patched text of every function, written then with a few large
// writes instead of two system calls a patch (cc1, 26,000 functions with
// their exits, made some 57,000 of each per process). Reads of the
// space's code during the scan see the pending bytes (readText), as they
// saw the written ones before.
type pending struct {
	writes []pendingWrite
	byPage map[uint64][]int32 // page address: the writes touching it, in order
	// read: text pages as read from memory since the batch began (a scan
	// reads each function's first bytes: one read a page, not one a
	// function). Memory changes only by our writes meanwhile, each
	// through the space and so in writes too; an injection, which runs
	// the thread, ends the batch (injectee.settle).
	read map[uint64][]byte
}

type pendingWrite struct {
	addr uint64
	b    []byte
}

func newPending() *pending {
	return &pending{byPage: map[uint64][]int32{}, read: map[uint64][]byte{}}
}

// readPage is the page at pg as memory holds it, read once.
func (p *pending) readPage(tid int, pg uint64) ([]byte, error) {
	if b, ok := p.read[pg]; ok {
		return b, nil
	}
	b := make([]byte, ptrace.PageSize)
	if err := ptrace.ReadMem(tid, pg, b); err != nil {
		return nil, err
	}
	p.read[pg] = b
	return b, nil
}

const pageMask = ptrace.PageSize - 1

// pageBufs is room for n pages: in one piece, and each page of it.
func pageBufs(n int) (mem []byte, pages [][]byte) {
	mem = make([]byte, n*ptrace.PageSize)
	pages = make([][]byte, n)
	for i := range pages {
		pages[i] = mem[i*ptrace.PageSize : (i+1)*ptrace.PageSize]
	}
	return mem, pages
}

// put notes b written at addr, after every write noted before.
func (p *pending) put(addr uint64, b []byte) {
	if len(b) == 0 {
		return
	}
	i := int32(len(p.writes))
	p.writes = append(p.writes, pendingWrite{addr, slices.Clone(b)})
	for pg := addr &^ pageMask; pg < addr+uint64(len(b)); pg += ptrace.PageSize {
		p.byPage[pg] = append(p.byPage[pg], i)
	}
}

// overlay lays the pending writes over buf, the memory at addr.
func (p *pending) overlay(addr uint64, buf []byte) {
	end := addr + uint64(len(buf))
	for pg := addr &^ pageMask; pg < end; pg += ptrace.PageSize {
		lo, hi := max(addr, pg), min(end, pg+ptrace.PageSize)
		for _, i := range p.byPage[pg] {
			w := p.writes[i]
			from, to := max(lo, w.addr), min(hi, w.addr+uint64(len(w.b)))
			if from < to {
				copy(buf[from-addr:to-addr], w.b[from-w.addr:to-w.addr])
			}
		}
	}
}

// prefetch reads the text pages holding the first bytes of l's syms
// that a batch has not read, many to a system call: the scan reads each
// function's first bytes (undoLeftoverIn).
func (s *space) prefetch(tid int, l *loaded, syms []instrument.Symbol) {
	p := s.batch
	if p == nil {
		return
	}
	var pages []uint64
	for _, sym := range syms {
		if pg := (sym.Value + l.bias) &^ pageMask; p.read[pg] == nil {
			pages = append(pages, pg)
		}
	}
	slices.Sort(pages)
	pages = slices.Compact(pages)
	_, bufs := pageBufs(len(pages))
	if ptrace.ReadMemv(tid, pages, bufs) != nil {
		return // each page read as it is needed
	}
	for i, pg := range pages {
		p.read[pg] = bufs[i]
	}
}

// holds tells whether memory at addr holds want, reading its pages once
// (p's writes are not laid over).
func (p *pending) holds(tid int, addr uint64, want []byte) bool {
	got := make([]byte, len(want))
	return p.readCached(tid, addr, got) == nil && bytes.Equal(got, want)
}

// readCached reads memory at addr into buf through the pages read
// before (readPage); a range partly unmapped is read as it is.
func (p *pending) readCached(tid int, addr uint64, buf []byte) error {
	end := addr + uint64(len(buf))
	for pg := addr &^ pageMask; pg < end; pg += ptrace.PageSize {
		b, err := p.readPage(tid, pg)
		if err != nil {
			return ptrace.ReadMem(tid, addr, buf)
		}
		lo, hi := max(addr, pg), min(end, pg+ptrace.PageSize)
		copy(buf[lo-addr:hi-addr], b[lo-pg:hi-pg])
	}
	return nil
}

// pages is the pending writes' pages, by address, split into those in
// the space's areas and the others (text).
func (p *pending) pages(as *space) (area, text []uint64) {
	for pg := range p.byPage {
		if as.areaOf(pg) != nil {
			area = append(area, pg)
		} else {
			text = append(text, pg)
		}
	}
	slices.Sort(area)
	slices.Sort(text)
	return area, text
}

// readText reads the space's memory at addr as the pending writes will
// leave it.
func (s *space) readText(tid int, addr uint64, buf []byte) error {
	p := s.batch
	if p == nil {
		return ptrace.ReadMem(tid, addr, buf)
	}
	if err := p.readCached(tid, addr, buf); err != nil {
		return err
	}
	p.overlay(addr, buf)
	return nil
}

// writeCode writes code into one of the space's areas, or notes it
// pending.
func (s *space) writeCode(tid int, addr uint64, code []byte) error {
	if s.batch != nil {
		s.batch.put(addr, code)
		return nil
	}
	return ptrace.WriteMem(tid, addr, code)
}

// putText notes a patch pending if it lies within one page of a still
// space during a scan: written with its page, it goes in whole.
func (s *space) putText(addr uint64, b []byte) bool {
	if s.batch == nil || !s.sole || len(b) == 0 || addr&^pageMask != (addr+uint64(len(b))-1)&^pageMask {
		return false
	}
	s.batch.put(addr, b)
	return true
}

// flushPending writes what the scan left pending, through task tid: the
// areas' code first, so that every jump the text gets finds its
// trampoline there, then each page of text with the patches on it, each
// page in one piece (ptrace.Text.PokePages: a tracer killed meanwhile
// leaves every function patched or not, its code whole either way).
// Should a write fail, its writes go in one by one as before.
func (s *space) flushPending(tid int) error {
	p := s.batch
	if p == nil {
		return nil
	}
	s.batch = nil
	area, text := p.pages(s)
	if err := s.flushArea(tid, p, area); err != nil {
		return err
	}
	return s.flushText(tid, p, text)
}

// flushArea writes the pending bytes on the area pages: nothing runs
// there yet, so spans of them, merged, go in as they are.
func (s *space) flushArea(tid int, p *pending, pages []uint64) error {
	in := map[uint64]bool{}
	for _, pg := range pages {
		in[pg] = true
	}
	var spans [][2]uint64
	for _, w := range p.writes {
		if in[w.addr&^pageMask] {
			spans = append(spans, [2]uint64{w.addr, w.addr + uint64(len(w.b))})
		}
	}
	slices.SortFunc(spans, func(a, b [2]uint64) int { return cmp.Compare(a[0], b[0]) })
	var merged [][2]uint64
	for _, sp := range spans {
		if n := len(merged); n > 0 && sp[0] <= merged[n-1][1] {
			merged[n-1][1] = max(merged[n-1][1], sp[1])
			continue
		}
		merged = append(merged, sp)
	}
	addrs := make([]uint64, len(merged))
	bufs := make([][]byte, len(merged))
	for i, sp := range merged {
		addrs[i], bufs[i] = sp[0], make([]byte, sp[1]-sp[0])
		p.overlay(sp[0], bufs[i])
	}
	if err := ptrace.WriteMemv(tid, addrs, bufs); err != nil {
		return fmt.Errorf("write the trampolines: %w", err)
	}
	return nil
}

// flushText writes the text pages with pending patches: each read as it
// is now, the patches laid over, and runs of adjacent pages written
// whole.
func (s *space) flushText(tid int, p *pending, pages []uint64) error {
	if len(pages) == 0 {
		return nil
	}
	mem, all := pageBufs(len(pages))
	var unread []uint64
	var bufs [][]byte
	for i, pg := range pages {
		if r, ok := p.read[pg]; ok {
			copy(all[i], r)
			continue
		}
		unread, bufs = append(unread, pg), append(bufs, all[i])
	}
	if err := ptrace.ReadMemv(tid, unread, bufs); err != nil {
		return s.pokeEach(tid, p, pages, err)
	}
	for i, pg := range pages {
		p.overlay(pg, all[i])
	}
	t, err := s.textOf(tid)
	if err != nil {
		return s.pokeEach(tid, p, pages, err)
	}
	for i := 0; i < len(pages); {
		j := i + 1
		for j < len(pages) && pages[j] == pages[j-1]+ptrace.PageSize {
			j++
		}
		if err := t.PokePages(pages[i], mem[i*ptrace.PageSize:j*ptrace.PageSize]); err != nil {
			if err := s.pokeEach(tid, p, pages[i:j], err); err != nil {
				return err
			}
		}
		i = j
	}
	return nil
}

// pokeEach writes the pending writes on pages one by one, in the order
// made, the way they went in before pages were written whole (why: the
// error that made it so).
func (s *space) pokeEach(tid int, p *pending, pages []uint64, why error) error {
	on := map[int32]bool{}
	for _, pg := range pages {
		for _, i := range p.byPage[pg] {
			on[i] = true
		}
	}
	for i, w := range p.writes {
		if !on[int32(i)] {
			continue
		}
		if err := s.pokeText(tid, w.addr, w.b); err != nil {
			return fmt.Errorf("write the patches (%v): %w", why, err)
		}
	}
	return nil
}
