package attach

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/profile-dev/profile/attach/internal/inline"
	"github.com/profile-dev/profile/attach/internal/stub"
	"github.com/profile-dev/profile/instrument"
	"github.com/profile-dev/profile/model"
)

// patchSites gives the function sym of module l, whose first bytes cannot
// take an inline probe (why), one at its call sites: every direct branch
// to its entry in its module is re-aimed at a trampoline that jumps to the
// untouched entry (instrument.Module.CallSites has found them all, or says
// why not). Each branch is rewritten as a patch is (rewrite: an int3
// guards its first byte meanwhile); a branch whose bytes differ from the
// file's is refused, as a function's entry is.
func (e *engine) patchSites(tid int, as *space, l *loaded, sym instrument.Symbol, id uint32, why error) error {
	is := as.inl
	addr := sym.Value + l.bias
	sites, err := l.mod.CallSites(sym)
	if err != nil {
		return fmt.Errorf("%w; %w", why, err)
	}
	// A site inside another function's entry patch (its first bytes
	// relocated into its trampoline): that patch goes first, and comes
	// back over the re-aimed site once it is done.
	var again []instrument.Symbol
	defer func() {
		for _, gs := range again {
			fn := e.s.Interner().Func(l.modIdx, gs.Name)
			if err := e.patchInline(tid, as, l, gs, e.inlineID(fn), e.threadRips(as)); err != nil {
				e.warn("%s: its inline probe could not come back after its call of %s was re-aimed: %v", gs.Name, sym.Name, err)
			}
		}
	}()
	for _, s := range sites {
		at := s.At + l.bias
		if is.HasSite(at) {
			// The call that begins a function, its probe (PlanCallEntry).
			return fmt.Errorf("%w; call site %#x re-aimed already", why, at)
		}
		for gAddr, g := range is.Patches {
			gp := g.Patch
			if g.Replaced(at, s.Len) {
				gs, ok := l.mod.Lookup(gAddr - l.bias)
				if !ok || gs.Value+l.bias != gAddr || g.Fn == model.None {
					return fmt.Errorf("%w; call site %#x inside a patch", why, at)
				}
				if err := e.clearOf(tid, as, gp.At, gp.Len, e.threadRips(as)); err != nil {
					return fmt.Errorf("%w; call site %#x inside a patch: %w", why, at, err)
				}
				if err := e.rewrite(tid, as, gp.At, gp.Jump, gp.Orig); err != nil {
					return fmt.Errorf("%w; call site %#x inside a patch: %w", why, at, err)
				}
				delete(is.Patches, gAddr)
				again = append(again, gs)
			}
		}
	}
	code := make([][]byte, len(sites))
	for i, s := range sites {
		cur, err := fileBytesAt(tid, as, l, s.At+l.bias, s.Len)
		if err != nil {
			return fmt.Errorf("%w; call site %#x %w", why, s.At+l.bias, err)
		}
		code[i] = cur
	}
	a, tramp, stubs, err := e.newTramp(tid, as, addr, id)
	if err != nil {
		return err
	}
	p, err := instrument.PlanSites(addr, l.bias, tramp, stubs, id, sites, code)
	if err != nil {
		return fmt.Errorf("%w; %s", why, errors.Unwrap(err))
	}
	if err := as.writeCode(tid, tramp, p.Tramp); err != nil {
		return err
	}
	a.next += uint64(len(p.Tramp))
	ip := &inline.Patch{Patch: instrument.Patch{Addr: addr, At: addr}, TrampAt: tramp, Fn: model.None}
	if id&stub.FlagRestore == 0 {
		ip.Fn = int(id & stub.FnMask)
	}
	for _, s := range p.Sites {
		if err := e.rewrite(tid, as, s.At, s.Orig, s.New); err != nil {
			// Some of its calls would go uncounted: the sites done so far
			// get their bytes back, and it gets a trap probe instead. One
			// that cannot stays recorded: detach tries again.
			for _, d := range ip.Sites {
				if e.rewrite(tid, as, d.At, d.New, d.Orig) == nil {
					delete(is.Sites, d.At)
				} else {
					is.Patches[addr] = ip
				}
			}
			return fmt.Errorf("patch call site %#x: %w", s.At, err)
		}
		ip.Sites = append(ip.Sites, s)
		is.SetSite(s)
	}
	is.Patches[addr] = ip
	is.Tramps = append(is.Tramps, [2]uint64{tramp, tramp + uint64(len(p.Tramp))})
	e.stats.Probes.Sites++
	return nil
}

// undoLeftoverSites puts back the branches a killed profiler re-aimed in
// module path's code (its patchSites): a call, jmp or jcc whose
// displacement differs from the file's and that leads into executable
// memory that is no file's and not ours. Its trampolines stay mapped
// until nothing reaches them (reclaim.go).
func (e *engine) undoLeftoverSites(tid int, as *space, path string, maps []instrument.Mapping) {
	foreign := func(a uint64) bool {
		for _, m := range maps {
			if m.Exec() && m.Path == "" && a >= m.Start && a < m.End {
				for _, p := range as.foreignParts(m.Start, m.End) {
					if a >= p[0] && a < p[1] {
						return true
					}
				}
			}
		}
		return false
	}
	var rips []uint64
	for _, m := range maps {
		if m.Path != path {
			continue
		}
		got, want, ok := textAndFile(tid, as, maps, m)
		if !ok {
			continue
		}
		// The re-aimed displacements (the opcode is the file's) go back
		// first, then the jumps that replaced whole instructions: a call
		// site's fast path jumps into its function's entry patch (to the
		// call it may keep in place), so, killed in between, we must
		// leave no site leading into a function already put back (as
		// Space.Changes orders a detach's).
		var sites, jumps [][2]int
		for from := 0; ; {
			k, n, found := changedBranch(got, want, m.Start, from, foreign)
			if !found {
				break
			}
			site := true
			if got[k] != want[k] || n == 6 && got[k+1] != want[k+1] {
				if got[k] != 0xe9 || n != 5 {
					from = k + n
					continue
				}
				n = leftoverJumpLen(got, want, k)
				site = false
			}
			from = k + n
			if site {
				sites = append(sites, [2]int{k, n})
			} else {
				jumps = append(jumps, [2]int{k, n})
			}
		}
		for _, c := range append(sites, jumps...) {
			k, n := c[0], c[1]
			if rips == nil {
				rips = e.threadRips(as) // once: clearOf keeps them current
			}
			e.rewindResumes(tid, as, m.Start+uint64(k), n, got[k:k+n], want[k:min(len(want), k+n+15)])
			if e.clearOf(tid, as, m.Start+uint64(k), n, rips) != nil {
				continue
			}
			if e.rewrite(tid, as, m.Start+uint64(k), got[k:k+n], want[k:k+n]) == nil {
				e.stats.Leftover.Patches++
			}
		}
	}
}

// leftoverJumpLen is how many bytes from k a killed profiler's jump
// there (an exit probe: a jump over a return's bytes, int3s after it; or
// an entry patch, whose last bytes may be a call it kept in place)
// replaced, got being the text and want its file's bytes. The int3s fill
// the rest of the file's instructions the jump covers, where the file may
// have an 0xcc byte too (an immediate's or a displacement's: redis's
// replicationAttachToNewMaster compares with a displacement cc b1 1a 00,
// and a patch undone to its first 0xcc left four int3s in its middle).
func leftoverJumpLen(got, want []byte, k int) int {
	n := instrument.PatchLen
	end := k + instrument.CoverLen(want[k:], n)
	for k+n < len(got) && got[k+n] == 0xcc && (want[k+n] != 0xcc || k+n < end) {
		n++
	}
	if c := instrument.InPlaceLen(got[k+n:]); c > 0 && k+n+c <= len(want) && want[k+n+c-5] == 0xe8 {
		n += c
	}
	return n
}

// fileBytesAt reads the n bytes of text at runtime address at, which a
// probe may re-aim only if they are module l's file's and no breakpoint
// sits on them (a branch under one runs its own copy of the original).
func fileBytesAt(tid int, as *space, l *loaded, at uint64, n int) ([]byte, error) {
	file, err := l.mod.ReadAt(at-l.bias, n)
	if err != nil {
		return nil, errors.New("not in its file")
	}
	cur := make([]byte, n)
	if err := as.readText(tid, at, cur); err != nil {
		return nil, errors.New("unreadable")
	}
	as.origBytes(at, cur)
	if !bytes.Equal(cur, file) {
		return nil, errors.New("differs from its file")
	}
	for k := range uint64(n) {
		if _, ok := as.bps[at+k]; ok {
			return nil, errors.New("under a breakpoint")
		}
	}
	return cur, nil
}
