package attach

import (
	"cmp"
	"encoding/binary"
	"errors"
	"maps"
	"slices"

	"golang.org/x/sys/unix"

	"github.com/profile-dev/profile/attach/internal/inline"
	"github.com/profile-dev/profile/attach/internal/ptrace"
	"github.com/profile-dev/profile/attach/internal/stub"
	"github.com/profile-dev/profile/instrument"
	"github.com/profile-dev/profile/model"
)

// The counting probe's fast path (docs/design.md, Counting fast path): a
// counted function's calls from its busiest call sites, by one thread of
// the process, the owner, are one plain increment of the call site's
// counter, taken before the trampoline calls the counting stub
// (instrument.FastCount). The trampoline's first instruction, push id,
// becomes a jump to the fast path; the text is not touched again. A
// counter counts for one thread only: the fast path compares the thread
// pointer with the owner word of its area, which holds the owner's while
// armed and 0 (no thread's) while disarmed. Owner words change while
// every thread is stopped, or become 0 before a new task runs in the
// memory (a clone, a vfork: a new thread may get a gone owner's thread
// pointer, a vfork child runs on its parent's): a data write, and the
// owner's calls counted until then are its arcs as much as those in its
// count table. The call sites' return addresses and their counters'
// addresses sit in the area above the code, the owner word below them;
// the counters in the memfd of rings (stub.FastCounts), read here while
// the process runs, and after it has gone or exec'd.
const (
	fastLinesSize = 64 << 10 // the top of each area: the fast paths' call sites
	// fastMinCalls is how many calls a call site has made through the
	// counting stub before it takes a slot: the slots go to the busy
	// sites, for good (a slot's counter is never given to another site).
	fastMinCalls = 1000
)

// codeEnd is how far code may fill area a: the owner word and the fast
// paths' call sites are above.
func (a *area) codeEnd() uint64 { return a.size - fastLinesSize }

// ownerWord is the address of area a's owner word: the thread pointer of
// the thread whose calls its fast paths count, 0 for none. It takes the
// lowest call site line.
func (a *area) ownerWord() uint64 { return a.base + a.codeEnd() }

// fastCounts is one space's fast paths.
type fastCounts struct {
	fns map[int]*fastFn // by function
	// owner is the thread whose calls the counters count; live while the
	// owner words name it. A disarmed owner stays the counters' until the
	// next is armed: an increment it was making as the word became 0 is
	// its own.
	owner *thread
	live  bool
	// done: calls counted there and already given to their thread.
	done map[*thread]map[fastKey]int64
	// paths counts the fast paths written: sampling's index of relocated
	// instructions is rebuilt when it changes.
	paths int
	lines int // counter lines taken in the memfd
	// refused: counted functions that cannot have a fast path (no room,
	// no patch at their entry, a body too long): not planned again.
	refused map[int]bool
}

type fastKey struct {
	ret uint64
	fn  int
}

// fastFn is one function's fast path, call sites and counters.
type fastFn struct {
	tramp    uint64      // its trampoline
	id       uint32      // the id the trampoline pushes
	at, end  uint64      // the fast path's code
	bodies   [][2]uint64 // its copies of the moved instructions
	line     uint64      // its call sites and their counters' addresses, in the area
	counters int         // its counter line in the memfd
	rets     [instrument.FastSlots]uint64
	base     [instrument.FastSlots]uint64 // each counter when owner's period began
	armed    bool                         // the trampoline jumps here
	// sites: its call sites' own fast paths (fastsite.go); siteTried,
	// the slots whose call was looked at for one.
	sites     [][2]uint64
	siteTried [instrument.FastSlots]bool
}

// fastOwner is the thread of space as whose calls its fast paths are to
// count: the one with the most calls in its count table (the current
// owner while it has half as many as that one), or nil when there is
// none, a vfork child borrows the space, or a thread we do not trace runs
// its code.
func (e *engine) fastOwner(as *space) *thread {
	if as.holding() || as.inl == nil {
		return nil
	}
	var best *thread
	var most uint64
	calls := map[*thread]uint64{}
	for _, t := range e.threads {
		if t.proc.as != as {
			continue
		}
		if t.vforkOf != nil {
			return nil
		}
		slot, ok := as.inl.TidSlot[t.tid]
		if !ok {
			continue
		}
		var n uint64
		as.inl.Ring(slot).Counts(func(_ uint64, id uint32, c uint64) {
			if e.counted[int(id)] {
				n += c
			}
		})
		calls[t] = n
		if best == nil || n > most {
			best, most = t, n
		}
	}
	if fc := as.fast; fc != nil && fc.owner != nil && fc.owner != best {
		if n, ok := calls[fc.owner]; ok && 2*n >= most {
			return fc.owner
		}
	}
	return best
}

// fastPlan is what arming as for its owner t would do: the new call
// sites each counted function's fast path takes (busiest first, from t's count
// table), and whether anything is to be done at all.
func (e *engine) fastPlan(as *space, t *thread) (map[int][]uint64, bool) {
	is := as.inl
	slot, ok := is.TidSlot[t.tid]
	if is.Mem == nil || !ok || len(e.counted) == 0 {
		return nil, false
	}
	fc := as.fast
	type site struct {
		ret   uint64
		calls uint64
	}
	by := map[int][]site{}
	is.Ring(slot).Counts(func(ret uint64, id uint32, calls uint64) {
		if fn := int(id); calls >= fastMinCalls && ret&stub.TailMark == 0 && e.counted[fn] && (fc == nil || !fc.refused[fn]) {
			by[fn] = append(by[fn], site{ret, calls})
		}
	})
	plan := map[int][]uint64{}
	for fn, sites := range by {
		var f *fastFn
		if fc != nil {
			f = fc.fns[fn]
		}
		free := instrument.FastSlots
		if f != nil {
			free = 0
			for _, r := range f.rets {
				if r == 0 {
					free++
				}
			}
		}
		slices.SortFunc(sites, func(a, b site) int { return cmp.Compare(b.calls, a.calls) })
		for _, s := range sites {
			if free == 0 {
				break
			}
			if f != nil && slices.Contains(f.rets[:], s.ret) {
				continue
			}
			plan[fn] = append(plan[fn], s.ret)
			free--
		}
	}
	disarmed := fc != nil && (fc.owner != t || !fc.live) && len(fc.fns) > 0
	return plan, len(plan) > 0 || disarmed
}

// armFast gives the functions of plan their new call sites (and a fast path
// where they have none) and arms every fast path of as for t, their owner
// from now: every thread stopped.
func (e *engine) armFast(as *space, t *thread, plan map[int][]uint64) {
	if as.fast == nil {
		as.fast = &fastCounts{fns: map[int]*fastFn{}, done: map[*thread]map[fastKey]int64{}, refused: map[int]bool{}}
	}
	fc := as.fast
	byFn := map[int]*inline.Patch{}
	for _, p := range as.inl.Patches {
		if p.Fn != model.None && p.Patch.Len > 0 {
			byFn[p.Fn] = p
		}
	}
	for fn, rets := range plan {
		f := fc.fns[fn]
		if f == nil {
			if p := byFn[fn]; p != nil {
				f = e.newFastPath(t.tid, as, p)
			}
			if f == nil {
				fc.refused[fn] = true
				continue
			}
			fc.fns[fn] = f
		}
		next := f.rets
		for _, ret := range rets {
			if k := slices.Index(next[:], 0); k >= 0 {
				next[k] = ret
			}
		}
		var w [instrument.FastSlots * 8]byte
		for k, ret := range next {
			binary.LittleEndian.PutUint64(w[8*k:], ret)
		}
		if ptrace.WriteMem(t.tid, f.line, w[:]) == nil {
			f.rets = next
		}
	}
	if fc.owner != t && fc.owner != nil && e.inFastPath(as, fc.owner) {
		// Stopped between its owner check and its increment: that one
		// is its own, and lands once it goes on. It stays the owner.
		t = fc.owner
	}
	if fc.owner != t {
		// A new period: what the counters hold now is the last owner's.
		e.harvestFast(as)
		fc.owner = t
	}
	fs, ok := as.inl.TidFS[t.tid]
	if !ok || e.setOwner(t.tid, as, fs) != nil {
		e.setOwner(t.tid, as, 0)
		fc.live = false
		return
	}
	fc.live = true
	for fn, f := range fc.fns {
		if !f.armed {
			jmp := []byte{0xe9, 0, 0, 0, 0}
			binary.LittleEndian.PutUint32(jmp[1:], uint32(int32(int64(f.at)-int64(f.tramp+5))))
			f.armed = ptrace.WriteMem(t.tid, f.tramp, jmp) == nil
		}
		if p := byFn[fn]; f.armed && p != nil {
			for k := range f.rets {
				e.fastSite(t.tid, as, f, p, k)
			}
		}
	}
}

// inFastPath tells whether thread t of space as, stopped, is inside one
// of its fast paths.
func (e *engine) inFastPath(as *space, t *thread) bool {
	var regs unix.PtraceRegs
	if e.threads[t.tid] != t || t.proc.as != as || !t.stopped || ptrace.GetRegs(t.tid, &regs) != nil {
		return false
	}
	for _, f := range as.fast.fns {
		if regs.Rip >= f.at && regs.Rip < f.end {
			return true
		}
		for _, s := range f.sites {
			if regs.Rip >= s[0] && regs.Rip < s[1] {
				return true
			}
		}
	}
	return false
}

// setOwner writes fs, a thread pointer or 0, to the owner word of every
// area of as holding a fast path, through task tid.
func (e *engine) setOwner(tid int, as *space, fs uint64) error {
	var w [8]byte
	binary.LittleEndian.PutUint64(w[:], fs)
	var err error
	for _, a := range as.areas {
		if fastLinesUsed(as, a) > 0 {
			err = errors.Join(err, ptrace.WriteMem(tid, a.ownerWord(), w[:]))
		}
	}
	return err
}

// newFastPath writes function p's fast path and call site line in its
// trampoline's area and takes a line of counters, or returns nil when
// they do not fit. p's trampoline calls the counting stub (its function
// is counted); its id is the one the planned trampoline pushes.
func (e *engine) newFastPath(tid int, as *space, p *inline.Patch) *fastFn {
	a := as.areaOf(p.TrampAt)
	hdr := p.Patch.Tramp
	if a == nil || len(p.Moved) == 0 || as.fast.lines >= stub.FastCountLines || len(hdr) < 5 || hdr[0] != 0x68 {
		return nil
	}
	lines := fastLinesUsed(as, a)
	if (lines+2)*instrument.FastLine > fastLinesSize { // the lowest line holds the owner word
		return nil
	}
	line := a.base + a.size - uint64(lines+1)*instrument.FastLine
	at := (a.next + 15) &^ 15
	f := &fastFn{tramp: p.TrampAt, id: binary.LittleEndian.Uint32(hdr[1:]), at: a.base + at, line: line, counters: as.fast.lines}
	code, err := instrument.FastCount(f.at, f.tramp, line, a.ownerWord(), f.id, func(to uint64) ([]byte, error) {
		b, err := instrument.RelocateMoved(p.Moved, p.Patch.At, to, p.Patch.InPlace)
		f.bodies = append(f.bodies, [2]uint64{to, to + uint64(len(b))})
		return b, err
	})
	if err != nil || at+uint64(len(code)) > a.codeEnd() {
		return nil
	}
	ptrs := make([]byte, 0, instrument.FastSlots*8)
	for k := range instrument.FastSlots {
		ptrs = binary.LittleEndian.AppendUint64(ptrs, f.counterAt(as.inl, k))
	}
	if ptrace.WriteMem(tid, line+instrument.FastSlots*8, ptrs) != nil || ptrace.WriteMem(tid, f.at, code) != nil {
		return nil
	}
	as.fast.lines++
	f.end = f.at + uint64(len(code))
	a.next = at + uint64(len(code))
	as.inl.Tramps = append(as.inl.Tramps, [2]uint64{f.at, f.at + uint64(len(code))})
	as.fast.paths++
	e.stats.Probes.Fast++
	return f
}

// counterAt is the address of slot k's counter in the target: in the
// memfd of rings.
func (f *fastFn) counterAt(is *inlineSpace, k int) uint64 {
	return is.Rings + uint64(stub.FastCounts+f.counters*stub.FastCountLine+8*k)
}

// fastLinesUsed is how many call site lines of area a the fast paths of as
// took.
func fastLinesUsed(as *space, a *area) int {
	n := 0
	if as.fast != nil {
		for _, f := range as.fast.fns {
			if f.line >= a.base && f.line < a.base+a.size {
				n++
			}
		}
	}
	return n
}

// harvestFast gives the owner of as's counters the calls counted there
// since they were last read; the process may run on (a word is read at
// once, and what is counted after the read is the next harvest's), or be
// gone.
func (e *engine) harvestFast(as *space) {
	fc := as.fast
	if fc == nil || fc.owner == nil || as.inl.Mem == nil {
		return
	}
	t := fc.owner
	done := fc.done[t]
	if done == nil {
		done = map[fastKey]int64{}
		fc.done[t] = done
	}
	for fn, f := range fc.fns {
		now := as.inl.FastCalls(f.counters)
		for k, ret := range f.rets {
			if ret != 0 && now[k] != f.base[k] {
				done[fastKey{ret, fn}] += int64(now[k] - f.base[k])
				e.stats.Probes.FastCalls += int64(now[k] - f.base[k])
			}
		}
		f.base = now
	}
}

// disarmFast makes the owner words 0, through stopped task tid, and gives
// the counters' calls to their owner: a new task is about to run in as
// (other threads may run). The owner stays the counters' until the next
// arming: one of its increments may land after this harvest.
func (e *engine) disarmFast(as *space, tid int) {
	fc := as.fast
	if fc == nil || !fc.live {
		return
	}
	if err := e.setOwner(tid, as, 0); err != nil {
		e.warn("pid %d: the counting fast path could not be disarmed: %v", tid, err)
	}
	fc.live = false
	e.harvestFast(as)
}

// fastArcs are t's calls counted by the fast paths of as, read now if t
// owns the counters.
func (e *engine) fastArcs(as *space, t *thread) []model.Arc {
	fc := as.fast
	if fc == nil {
		return nil
	}
	if fc.owner == t {
		e.harvestFast(as)
	}
	var arcs []model.Arc
	for k, calls := range fc.done[t] {
		arcs = append(arcs, model.Arc{Caller: e.callerAt(as, k.ret), Callee: k.fn, Calls: calls})
	}
	return arcs
}

// forkFast is the fast paths of a process as forked by thread parent
// from one whose are fc: the same paths and call sites in its copy of the
// areas, counting from zero in its own memfd for the child's one thread,
// which has its parent's thread pointer, when they were armed for the
// parent. Otherwise, or without a memfd of its own (is.Mem nil: they
// would count in its parent's), the child's owner words become 0.
func (e *engine) forkFast(fc *fastCounts, parent, child *thread, as *space, is *inlineSpace) *fastCounts {
	if fc == nil {
		return nil
	}
	c := &fastCounts{fns: map[int]*fastFn{}, done: map[*thread]map[fastKey]int64{}, paths: fc.paths, lines: fc.lines,
		refused: maps.Clone(fc.refused)}
	for fn, f := range fc.fns {
		cf := *f
		cf.base = [instrument.FastSlots]uint64{}
		cf.sites, cf.bodies = slices.Clone(f.sites), slices.Clone(f.bodies)
		c.fns[fn] = &cf
	}
	if !fc.live {
		return c
	}
	if fc.owner != parent || is.Mem == nil {
		as.fast = c
		e.setOwner(child.tid, as, 0)
		return c
	}
	c.owner, c.live = child, true
	return c
}

// fastBodies are the fast paths' copies of moved instructions, for the
// samples taken there (sampling.go).
func (s *space) fastBodies() []trampBody {
	if s.fast == nil {
		return nil
	}
	var out []trampBody
	for fn, f := range s.fast.fns {
		for _, b := range f.bodies {
			out = append(out, trampBody{b[0], b[1], fn})
		}
	}
	return out
}

// fastPlan is the arming of one space for its owner.
type fastPlan struct {
	t     *thread
	sites map[int][]uint64
}

// fastPlans are the spaces whose fast paths are to be armed, for a new
// owner or again, or given new call sites, read from the count tables as
// the program runs: the look that finds some stops the threads (adapt).
func (e *engine) fastPlans() map[*space]fastPlan {
	out := map[*space]fastPlan{}
	seen := map[*space]bool{}
	for _, t := range e.threads {
		as := t.proc.as
		if seen[as] {
			continue
		}
		seen[as] = true
		o := e.fastOwner(as)
		if o == nil {
			continue
		}
		if sites, need := e.fastPlan(as, o); need {
			out[as] = fastPlan{o, sites}
		}
	}
	return out
}
