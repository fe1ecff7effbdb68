package attach

import (
	"github.com/profile-dev/profile/attach/internal/heal"
	"github.com/profile-dev/profile/attach/internal/inject"
	"github.com/profile-dev/profile/attach/internal/ptrace"
	"github.com/profile-dev/profile/attach/internal/trap"
	"github.com/profile-dev/profile/instrument"
	"github.com/profile-dev/profile/instrument/unwind"
	"github.com/profile-dev/profile/model"
)

// space is one address space: its modules, breakpoints and out-of-line
// areas. A vfork child shares its parent's space until it execs.
type space struct {
	modules []*loaded
	paths   map[string]bool // module paths already examined
	areas   []*area
	entry   uint64     // program entry breakpoint: libraries are mapped when it hits
	heal    *heal.Area // the target's SIGTRAP handler, nil until installed
	guarded uint64     // the watcher's id of its heal area (guard.go), 0 if none
	inl     *inlineSpace
	anon    [][2]uint64 // anonymous executable mappings, during a scan
	// untraced: the code of the modules none of whose functions is
	// traced, as the last scan found them (untraced.go).
	untraced []codeRange
	// chain: the injection chain in text slack (chain.go); its Addr is 0
	// when there is none.
	chain inject.Chain
	// text: the process's memory, open for writing its text (poke) from
	// the first write until the space is let go.
	text *ptrace.Text
	// batch: the code a scan of a still space writes, held until the
	// scan ends (pending.go); nil outside such a scan.
	batch *pending
	// sole: nothing runs in its memory while the tracer writes (a fresh
	// image's one task at its entry: soleTask; every task stopped for an
	// attach or a detach: stillSpace): a patch within a page goes in
	// with one write (rewrite).
	sole bool
	// keepAreas: detach leaves the areas mapped (a live stack may still
	// point into them).
	keepAreas bool
	// park: the threads of the space we do not trace, parked whenever
	// code changes (park.go); nil if none ever was.
	park *parking
	// keepHeal: detach leaves the heal area mapped (a thread is still
	// inside its handlers: their return is there).
	keepHeal bool
	// leftInPlace: detach leaves our code, areas and handlers as a killed
	// profiler does (a thread we do not trace could not be held still).
	leftInPlace bool

	traps     // the trap probes' breakpoints
	callKinds // call kinds by return address (inline probes)
	// callers: the traced function holding each call site a counting
	// probe has seen, by return address (counted.go).
	callers map[uint64]int
	// bodies: the trampolines' relocated instructions, by address, for
	// the samples taken there (sampling.go), built for bodiesOf patches.
	bodies     []trampBody
	bodiesOf   [2]int      // patches, fast paths
	parts      []codePart  // the trampolines and fast paths, by address (probePart)
	fast       *fastCounts // the counting probe's fast paths (fastcount.go)
	leftBehind             // what killed profilers left here (leftover.go, reclaim.go)
	// resumes: where the stopped threads' stacks resume, noted at the
	// start of a pass that patches (resume.go).
	resumes   []resumePoint
	spaceGate // the calling context's breakpoints (context.go)
}

// traps: the trap probes' breakpoints in a space, by address. removed:
// addresses of breakpoints taken out (a late SIGTRAP there is ours);
// parked: return-site breakpoints taken out while no frame awaits them,
// put back as they were when a call needs them again (demote.go).
type traps struct {
	bps     map[uint64]*bp
	removed map[uint64]bool
	parked  map[uint64]*bp
}

// callKinds: each call site's kind and traced caller by return address
// (inline probes); kindHot caches them by a hash of the return address:
// the drain asks at every entry, and the map's lookup was a twentieth of
// its time.
type callKinds struct {
	kinds   map[uint64]callSite
	kindHot [256]kindEntry
}

// callSite is a call's kind and the traced function that makes it
// (model.None if none): the caller a timed callee's frame goes below when
// that caller only counts its calls and has no frame of its own.
type callSite struct {
	kind   model.CallKind
	caller int
}

// leftBehind is what a scan found of killed profilers' work in a space:
// undoing is the module whose leftover patches a scan undoes; oldHeals
// the heal areas installHeal met in the SIGTRAP chain; reclaimed: the
// scan looked for their areas; leftoverKept: its reclaim found them still
// reached (a thread in their code), and detach tries again.
type leftBehind struct {
	undoing      *loaded
	oldHeals     []uint64
	reclaimed    bool
	leftoverKept bool
}

// spaceGate: the entry breakpoints of functions recorded only in the
// calling context, armed (in bps) while ctxIn threads are inside it.
type spaceGate struct {
	gated    map[uint64]*bp
	ctxIn    int
	ctxArmed bool
}

// kindEntry is a return address (0: none) and its call site.
type kindEntry struct {
	ret  uint64
	site callSite
}

// loaded is a module mapped in a space.
type loaded struct {
	mod    *instrument.Module
	bias   uint64
	lo, hi uint64 // runtime range of its mappings
	modIdx int    // index into the profile's modules
	main   bool
	// cfi: its call-frame information (the parts split off its
	// functions, coldRange), loaded when first asked; cfiErr why not.
	cfi    *unwind.Module
	cfiErr error
}

// coldRange is the link-time range of l's call-frame information around
// the link-time address pc.
func (l *loaded) coldRange(pc uint64) (lo, hi uint64, ok bool) {
	if l.cfi == nil && l.cfiErr == nil {
		l.cfi, l.cfiErr = unwind.Load(l.mod.Path, 0, 0, ^uint64(0))
	}
	if l.cfiErr != nil {
		return 0, 0, false
	}
	return l.cfi.Range(pc)
}

// bp is one int3 in the target (attach/internal/trap).
type bp = trap.BP

// area is an injected mapping holding out-of-line slots.
type area struct {
	base, size, next uint64
}

const (
	// injectSiteSize is slot 0 of the first area: `syscall; int3`, then a
	// jump to the heal area's restore stub (attach/internal/heal).
	injectSiteSize = 32
	areaSize       = 1 << 20
	near           = 1<<31 - 2*areaSize // reach of a rel32 from any slot of an area
	injectSlot     = 0                  // slot 0 of the first area holds `syscall; int3`
)

func newSpace() *space {
	s := &space{paths: map[string]bool{}, traps: traps{bps: map[uint64]*bp{}, removed: map[uint64]bool{}, parked: map[uint64]*bp{}}}
	s.kinds = map[uint64]callSite{}
	return s
}

// clone copies a space for a forked child: the child's memory is a copy of
// the parent's, breakpoints and areas included.
func (s *space) clone() *space {
	c := newSpace()
	c.modules = append(c.modules, s.modules...)
	for k, v := range s.paths {
		c.paths[k] = v
	}
	for k, v := range s.bps {
		b := *v
		c.bps[k] = &b
	}
	for k := range s.removed {
		c.removed[k] = true
	}
	for k, v := range s.parked {
		b := *v
		c.parked[k] = &b
	}
	for _, a := range s.areas {
		cp := *a
		c.areas = append(c.areas, &cp)
	}
	c.entry = s.entry
	c.chain = s.chain
	c.untraced = s.untraced // replaced, never changed in place
	c.heal = s.heal.Clone()
	if s.park != nil {
		// The child has one thread, but the park handler is its SIGURG
		// disposition too, to be given back at its detach.
		c.park = &parking{cookie: s.park.cookie, installed: s.park.installed}
	}
	if s.gated != nil {
		c.gated = map[uint64]*bp{}
		for k, v := range s.gated {
			if b, ok := c.bps[k]; ok {
				c.gated[k] = b
			} else {
				b := *v
				c.gated[k] = &b
			}
		}
	}
	c.ctxArmed = s.ctxArmed
	return c
}

// moduleAt returns the module whose mappings contain a runtime address.
func (s *space) moduleAt(addr uint64) *loaded {
	for _, m := range s.modules {
		if addr >= m.lo && addr < m.hi {
			return m
		}
	}
	return nil
}

// isPLT tells whether a runtime address is a PLT stub or GOT slot.
func (s *space) isPLT(addr uint64) bool {
	m := s.moduleAt(addr)
	if m == nil {
		return false
	}
	return m.mod.IsPLT(addr-m.bias) || m.mod.IsGOT(addr-m.bias)
}

// areaNear returns an area with a free slot within rel32 reach of addr.
func (s *space) areaNear(addr uint64) *area {
	for _, a := range s.areas {
		if a.next+instrument.SlotSize <= a.codeEnd() && dist(a.base, addr) < near {
			return a
		}
	}
	return nil
}

func (a *area) alloc() uint64 {
	slot := a.base + a.next
	a.next += instrument.SlotSize
	return slot
}

// areaOf is the out-of-line area holding address at, or nil.
func (s *space) areaOf(at uint64) *area {
	for _, a := range s.areas {
		if at >= a.base && at < a.base+a.size {
			return a
		}
	}
	return nil
}

func dist(a, b uint64) uint64 {
	if a > b {
		return a - b
	}
	return b - a
}

// origBytes patches the original bytes of breakpoints into code read from
// the target at addr, so planning never sees our own int3s.
func (s *space) origBytes(addr uint64, code []byte) {
	if len(s.bps) == 0 {
		return // a scan reads every function's first bytes: no lookups
	}
	for i := range code {
		if b, ok := s.bps[addr+uint64(i)]; ok {
			code[i] = b.Orig
		}
	}
}
