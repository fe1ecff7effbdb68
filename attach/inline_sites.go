package attach

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/profile-dev/profile/attach/internal/inline"
	"github.com/profile-dev/profile/attach/internal/ptrace"
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
	for _, s := range sites {
		at := s.At + l.bias
		for gAddr, g := range is.Patches {
			gp := g.Patch
			if gp.Len > 0 && at < gp.At+uint64(gp.Len) && at+uint64(s.Len) > gp.At {
				gs, ok := l.mod.Lookup(gAddr - l.bias)
				if !ok || gs.Value+l.bias != gAddr || g.Fn == model.None {
					return fmt.Errorf("%w; call site %#x inside a patch", why, at)
				}
				if err := e.rewrite(tid, as, gp.At, gp.Jump, gp.Orig); err != nil {
					return fmt.Errorf("%w; call site %#x inside a patch: %w", why, at, err)
				}
				delete(is.Patches, gAddr)
				again = append(again, gs)
			}
		}
	}
	defer func() {
		for _, gs := range again {
			fn := e.s.Interner().Func(l.modIdx, gs.Name)
			if err := e.patchInline(tid, as, l, gs, e.inlineID(fn), e.threadRips(as)); err != nil {
				e.warn("%s: its inline probe could not come back after its call of %s was re-aimed: %v", gs.Name, sym.Name, err)
			}
		}
	}()
	code := make([][]byte, len(sites))
	for i, s := range sites {
		file, err := l.mod.ReadAt(s.At, s.Len)
		if err != nil {
			return fmt.Errorf("%w; call site %#x not in its file", why, s.At+l.bias)
		}
		cur := make([]byte, s.Len)
		if err := ptrace.ReadMem(tid, s.At+l.bias, cur); err != nil {
			return fmt.Errorf("%w; call site %#x unreadable", why, s.At+l.bias)
		}
		as.origBytes(s.At+l.bias, cur)
		if string(cur) != string(file) {
			return fmt.Errorf("%w; call site %#x differs from its file", why, s.At+l.bias)
		}
		code[i] = cur
	}
	// A breakpoint on a branch runs its own copy of the original branch.
	for _, s := range sites {
		for b := range as.bps {
			if b >= s.At+l.bias && b < s.At+l.bias+uint64(s.Len) {
				return fmt.Errorf("%w; breakpoint on call site %#x", why, s.At+l.bias)
			}
		}
	}
	a, tramp, entry, err := e.newTramp(tid, as, addr)
	if err != nil {
		return err
	}
	p, err := instrument.PlanSites(addr, l.bias, tramp, entry, id, sites, code)
	if err != nil {
		return fmt.Errorf("%w; %s", why, errors.Unwrap(err))
	}
	if err := ptrace.WriteMem(tid, tramp, p.Tramp); err != nil {
		return err
	}
	a.next += uint64(len(p.Tramp))
	ip := &inline.Patch{Patch: instrument.Patch{Addr: addr, At: addr}, TrampAt: tramp, Fn: model.None}
	if id&stub.FlagRestore == 0 {
		ip.Fn = int(id & stub.FnMask)
	}
	for _, s := range p.Sites {
		if err := e.rewrite(tid, as, s.At, s.Orig, s.New); err != nil {
			// Those done so far stay, recorded: detach puts them back.
			err = fmt.Errorf("patch call site %#x: %w", s.At, err)
			if len(ip.Sites) == 0 {
				return err
			}
			e.warn("%s: %v: %d of its %d call sites probed", sym.Name, err, len(ip.Sites), len(p.Sites))
			break
		}
		ip.Sites = append(ip.Sites, s)
		is.Sites[s.At] = s
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
	for _, m := range maps {
		if m.Path != path {
			continue
		}
		got, want, ok := textAndFile(tid, maps, m)
		if !ok {
			continue
		}
		for i := range got {
			if got[i] == want[i] {
				continue
			}
			for k := max(0, i-5); k <= i; k++ {
				n := branchLen(got[k:])
				if n == 0 || k+n <= i || k+n > len(got) || got[k] != want[k] || n == 6 && got[k+1] != want[k+1] {
					continue
				}
				at := m.Start + uint64(k)
				to := at + uint64(n) + uint64(int64(int32(binary.LittleEndian.Uint32(got[k+n-4:]))))
				if !foreign(to) {
					continue
				}
				if e.rewrite(tid, as, at, got[k:k+n], want[k:k+n]) == nil {
					copy(got[k:k+n], want[k:k+n])
					e.stats.Leftover.Patches++
				}
				break
			}
		}
	}
}

// branchLen is the length of the rel32 call, jmp or jcc b starts with, 0
// for anything else.
func branchLen(b []byte) int {
	switch {
	case len(b) >= 5 && (b[0] == 0xe8 || b[0] == 0xe9):
		return 5
	case len(b) >= 6 && b[0] == 0x0f && b[1]&0xf0 == 0x80:
		return 6
	}
	return 0
}
