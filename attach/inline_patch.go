package attach

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/profile-dev/profile/attach/internal/inline"
	"github.com/profile-dev/profile/attach/internal/procfs"
	"github.com/profile-dev/profile/attach/internal/ptrace"
	"github.com/profile-dev/profile/attach/internal/stub"
	"github.com/profile-dev/profile/instrument"
	"github.com/profile-dev/profile/model"
)

// unwinders are the entry points of the C++/libgcc unwinder and of stack
// walks: before they read a thread's return addresses, the stub puts back
// every one it replaced (docs/design.md, Inline probes).
var unwinders = map[string]bool{
	"_Unwind_RaiseException": true, "_Unwind_Resume": true, "_Unwind_ForcedUnwind": true,
	"_Unwind_Resume_or_Rethrow": true, "_Unwind_Backtrace": true,
}

// returnsTwice are functions whose return address is saved and used
// again (setjmp's longjmp, vfork's child and parent): a replaced one would
// lead a second return to a shadow entry long gone. The counting probe
// replaces no return address: they take it (instrument.go), or a trap
// probe where their time was asked for.
var returnsTwice = map[string]bool{
	"vfork": true, "__vfork": true, "setjmp": true, "_setjmp": true, "__setjmp": true,
	"sigsetjmp": true, "__sigsetjmp": true, "getcontext": true, "__getcontext": true, "savectx": true,
}

// errReturnsTwice refuses a timed inline probe to a returnsTwice function.
var errReturnsTwice = errors.New("returns twice")

// countedID tells whether an inline id is a counted function's (no
// unwinder's entry).
func (e *engine) countedID(id uint32) bool {
	return id&stub.FlagRestore == 0 && e.counted[int(id&stub.FnMask)]
}

// isUnwinderLib tells the libraries holding an unwinder that may walk
// through probed frames (the main executable is looked at anyway).
func isUnwinderLib(path string) bool {
	b := baseName(path)
	return strings.HasPrefix(b, "libgcc_s") || strings.HasPrefix(b, "libunwind")
}

// unwindersOf lists the unwinder entry points among mod's symbols, looked
// for once per module (symbolsWhere).
func (e *engine) unwindersOf(mod *instrument.Module) []instrument.Symbol {
	return e.symbolsWhere(symbolList{pickKey: pickKey{mod: mod}, unwinders: true}, func(sym instrument.Symbol) bool {
		return unwinders[sym.Raw] || unwinders[sym.Name]
	})
}

// probeUnwinders gives the unwinder entry points of module l an inline
// probe that puts back the thread's return addresses. One that cannot be
// patched leaves a C++ exception through probed frames without its
// return addresses: say so.
func (e *engine) probeUnwinders(tid int, as *space, l *loaded, rips []uint64) {
	for _, sym := range e.unwindersOf(l.mod) {
		if err := e.patchInline(tid, as, l, sym, stub.FlagRestore, rips); err != nil {
			e.warn("%s in %s: %v: C++ exceptions through inline-probed functions may fail", sym.Name, baseName(l.mod.Path), err)
		}
	}
}

// probed records which probe function fn got, and why it is not an
// inline one (the profile keeps both).
func (e *engine) probed(fn int, kind model.ProbeKind, why string) {
	switch kind {
	case model.ProbeInline:
		e.stats.Probes.Inline++
	case model.ProbeTrap:
		e.stats.Probes.Trap++
	case model.ProbeCounted:
		e.stats.Probes.Counted++
	}
	if (kind == model.ProbeInline || kind == model.ProbeTrap) && e.s.Selected(fn) {
		e.detailProbed++
	}
	f := &e.s.Profile().Functions[fn]
	f.Probe, f.ProbeNote = kind, why
}

// refused counts why a function got no inline probe, by reasonKind: the
// profile keeps each function's own reason, addresses and all.
func (e *engine) refused(err error) {
	if e.stats.Probes.Refused == nil {
		e.stats.Probes.Refused = map[string]int{}
	}
	e.stats.Probes.Refused[reasonKind(err.Error())]++
}

// hexOffset is an address or offset in a reason.
var hexOffset = regexp.MustCompile(`0x[0-9a-f]+`)

// reasonKind is a reason with its addresses and offsets left out, so that
// like reasons count together ("a branch at +0x21 lands ..." and "a branch
// at +0x2d lands ..." are one).
func reasonKind(r string) string { return hexOffset.ReplaceAllString(r, "…") }

// patchInline gives the function sym of module l an inline probe with id
// (a function of the profile, or stub.FlagRestore for an unwinder). It returns
// the reason when the function cannot be patched safely: it then gets a
// trap probe (auto) or none (inline).
func (e *engine) patchInline(tid int, as *space, l *loaded, sym instrument.Symbol, id uint32, rips []uint64) (err error) {
	is := as.inl
	addr := sym.Value + l.bias
	if sym.Size == 0 {
		return errors.New("size unknown")
	}
	if (returnsTwice[sym.Raw] || returnsTwice[sym.Name]) && !e.countedID(id) {
		return errReturnsTwice
	}
	if _, ok := is.Patches[addr]; ok {
		return nil
	}
	// The function and its padding, in one read of the file.
	code, err := l.mod.ReadAt(sym.Value, int(sym.Size)+padLen(l.mod, sym))
	if err != nil {
		// The function ends its segment: no padding.
		if code, err = l.mod.ReadAt(sym.Value, int(sym.Size)); err != nil {
			return errors.New("code not in its file")
		}
	}
	// What the text holds: the file's bytes, and a call site we re-aimed
	// there (patchSites). The trampoline relocates that; a detach puts
	// the file's back.
	file := code
	if len(is.Sites) > 0 {
		code = slices.Clone(file)
		is.Overlay(addr, code)
	}
	pad := code[sym.Size:]
	// The text in memory must be that: no int3 of ours, no patch left by
	// a profiler that was killed.
	if err := e.undoLeftoverIn(tid, as, addr, code); err != nil {
		return err
	}
	if _, ok := as.bps[addr]; ok {
		return errors.New("breakpoint at its entry")
	}
	// Exit probes go in first, all or none: a return left without one
	// would not end its frame. They do nothing until the entry's id says
	// so (the return stub ends a hijacked frame).
	var exited []instrument.SiteBytes
	var bodies [][2]uint64
	if e.exitProbes && id&stub.FlagRestore == 0 && !e.countedID(id) {
		if plan := e.planExits(as, l, sym, code, pad, file, addr, rips); plan != nil {
			if exited, bodies = e.patchExits(tid, as, code, addr, plan, id); exited != nil {
				id |= stub.FlagExit
				defer func() {
					if err != nil {
						e.dropSites(tid, as, exited)
					}
				}()
			}
		}
	}
	a, tramp, stubs, err := e.newTramp(tid, as, addr, id)
	if err != nil {
		return err
	}
	body := code[:len(code)-len(pad)]
	branches, swept := l.mod.Swept(sym, file[:len(body)])
	fn := model.None
	if id&stub.FlagRestore == 0 {
		fn = int(id & stub.FnMask)
	}
	// A function that begins with a call takes its probe there; one
	// whose call a branch reaches, or that another probe re-aimed, gets
	// the entry patch's plan (and its reason to refuse).
	if ce, err := instrument.PlanCallEntry(body, addr, tramp, stubs, id, branches); err == nil && swept == nil && !is.HasSite(ce.Site.At) {
		if err := e.patchCallEntry(tid, as, l, a, addr, tramp, ce, fn, rips); err != nil {
			return err
		}
		is.Patches[addr].Exits, is.Patches[addr].ExitBodies = exited, bodies
		if exited != nil {
			e.exitedFn(fn, true)
		}
		return nil
	}
	p, err := instrument.PlanPatchSwept(body, pad, addr, tramp, stubs, id, branches, swept)
	if err != nil {
		// the reason alone, for --stats
		return prologueRefused{strings.TrimPrefix(err.Error(), instrument.ErrCannotPatch.Error()+": ")}
	}
	if as.resumesInside(p.At, p.Len) {
		return errResumesInside
	}
	if err := e.clearOf(tid, as, p.At, p.Len, rips); err != nil {
		return err
	}
	if err := as.writeCode(tid, tramp, p.Tramp); err != nil {
		return err
	}
	a.next += uint64(len(p.Tramp))
	cur := p.Orig
	p.Orig = slices.Clone(file[p.At-addr : p.At-addr+uint64(p.Len)])
	if err := e.rewrite(tid, as, p.At, cur, p.Jump); err != nil {
		return fmt.Errorf("patch: %w", err)
	}
	is.Patches[addr] = &inline.Patch{Patch: p, TrampAt: tramp, Fn: fn, Moved: cur}
	is.Tramps = append(is.Tramps, [2]uint64{tramp, tramp + uint64(len(p.Tramp))})
	is.Patches[addr].Exits, is.Patches[addr].ExitBodies = exited, bodies
	if exited != nil {
		e.exitedFn(fn, true)
	}
	return nil
}

// clearOf makes sure no thread of space as stands in at+1 .. at+n-1,
// bytes about to change: a thread held there, or a breakpoint, refuses
// the patch; a stopped thread is stepped out (rips, the stopped threads'
// rips, follow).
func (e *engine) clearOf(tid int, as *space, at uint64, n int, rips []uint64) error {
	if err := as.keepParked(tid); err != nil {
		return err
	}
	inside := func(a uint64) bool { return a > at && a < at+uint64(n) }
	for _, rip := range as.heldRips() {
		if inside(rip) {
			return prologueRefused{"a thread is stopped inside its first bytes"}
		}
	}
	// Before any step: a thread stepped onto one of our int3s would take
	// it for the step's trap.
	for b := range as.bps {
		if inside(b) {
			return prologueRefused{"breakpoint inside its first bytes"}
		}
	}
	for i, rip := range rips {
		if inside(rip) {
			to, ok := e.stepPast(as, rip, at, n)
			if !ok {
				return prologueRefused{"a thread is stopped inside its first bytes"}
			}
			rips[i] = to
		}
	}
	return nil
}

// patchCallEntry gives function fn of l its probe at the call among its
// first bytes (instrument.PlanCallEntry), its entry at addr, with the
// trampoline at tramp in area a: a thread between its entry and the call
// is stepped past the call first (its frame began before: no entry of
// ours), and the call must hold its file's bytes.
func (e *engine) patchCallEntry(tid int, as *space, l *loaded, a *area, addr, tramp uint64, ce instrument.CallEntry, fn int, rips []uint64) error {
	is := as.inl
	s := ce.Site
	if _, err := fileBytesAt(tid, as, l, s.At, len(s.Orig)); err != nil {
		return prologueRefused{"its first call " + err.Error()}
	}
	if as.resumesInside(addr, int(s.At+uint64(len(s.Orig))-addr)) {
		return errResumesInside
	}
	if err := e.clearOf(tid, as, addr, int(s.At+uint64(len(s.Orig))-addr), rips); err != nil {
		return err
	}
	if err := as.writeCode(tid, tramp, ce.Tramp); err != nil {
		return err
	}
	a.next += uint64(len(ce.Tramp))
	if err := e.rewrite(tid, as, s.At, s.Orig, s.New); err != nil {
		return fmt.Errorf("patch its first call: %w", err)
	}
	is.SetSite(s)
	is.Patches[addr] = &inline.Patch{Patch: instrument.Patch{Addr: addr, At: addr}, Sites: []instrument.SiteBytes{s},
		Fn: fn, TrampAt: tramp + uint64(ce.Hdr)}
	is.Tramps = append(is.Tramps, [2]uint64{tramp, tramp + uint64(len(ce.Tramp))})
	e.stats.Probes.CallEntries++
	return nil
}

// exitedFn records whether function fn has exit probes.
func (e *engine) exitedFn(fn int, has bool) {
	if e.exited == nil {
		e.exited = map[int]bool{}
	}
	if has {
		e.exited[fn] = true
	} else {
		delete(e.exited, fn)
	}
	e.stats.Probes.Exits = len(e.exited)
}

// patchExits writes the exit probes of plan, all of them or (nil) none.
func (e *engine) patchExits(tid int, as *space, code []byte, addr uint64, plan *instrument.ExitPlan, id uint32) ([]instrument.SiteBytes, [][2]uint64) {
	var done []instrument.SiteBytes
	var bodies [][2]uint64
	add := func(c instrument.SiteBytes, body [2]uint64, err error) bool {
		if err != nil {
			e.dropSites(tid, as, done)
			return false
		}
		done = append(done, c)
		if body[1] > body[0] {
			bodies = append(bodies, body)
		}
		return true
	}
	for _, r := range plan.Regions {
		if !add(e.patchExit(tid, as, code, addr, r, id)) {
			return nil, nil
		}
	}
	for _, t := range plan.Tails {
		c, err := e.patchTail(tid, as, code, addr, t, id)
		if !add(c, [2]uint64{}, err) {
			return nil, nil
		}
	}
	return done, bodies
}

// dropSites puts back the text at sites (exit probes): a thread inside
// their trampolines goes on there (they stay).
func (e *engine) dropSites(tid int, as *space, sites []instrument.SiteBytes) {
	for _, c := range sites {
		if e.rewrite(tid, as, c.At, c.New, c.Orig) == nil {
			delete(as.inl.Sites, c.At)
		}
	}
}

// planExits plans the exit probes of the function at addr (code and its
// padding pad as the text holds them, file as its file does), or nil when
// it keeps its return hijacked: no plan, or a thread stopped inside a
// region.
func (e *engine) planExits(as *space, l *loaded, sym instrument.Symbol, code, pad, file []byte, addr uint64, rips []uint64) *instrument.ExitPlan {
	plan, err := e.exitPlanOf(l, sym, code, pad, file, addr)
	if err != nil {
		return nil
	}
	held := append(as.heldRips(), rips...)
	for _, r := range as.resumes {
		held = append(held, r.pc)
	}
	spans := make([][2]int, 0, len(plan.Regions)+len(plan.Tails))
	for _, r := range plan.Regions {
		spans = append(spans, [2]int{r.Off, r.Len})
	}
	for i, t := range plan.Tails {
		spans = append(spans, [2]int{t.Off, t.Len})
		plan.Tails[i].Ends = l.mod.IsPLT(t.To - l.bias)
	}
	for _, r := range spans {
		lo, hi := addr+uint64(r[0]), addr+uint64(r[0]+r[1])
		for _, rip := range held {
			if rip > lo && rip < hi {
				return nil
			}
		}
		for b := range as.bps {
			if b >= lo && b < hi {
				return nil
			}
		}
	}
	return &plan
}

// patchTail writes the probe of tail jump t of the function at addr. A
// jump through the PLT (free, write: code of another module, untraced
// unless its library is) ends the frame there, as a return does: the
// stack shows the callee under the frame's caller, and perf gives the
// callee's time to it; the return stub's taking the frame over cost a
// mispredicted return a call. A frame recorded in detail keeps it, for
// the callee's return value.
func (e *engine) patchTail(tid int, as *space, code []byte, addr uint64, t instrument.TailSite, id uint32) (instrument.SiteBytes, error) {
	at := uint64(stub.TailSite)
	if t.Ends && id&stub.FlagDetail == 0 {
		at = stub.ExitSite
	}
	c, _, err := e.patchThrough(tid, as, code, addr, t.Off, t.Len, id, func(tramp, stubs uint64) ([]byte, []byte, error) {
		return instrument.TailTramp(code, addr, t, tramp, stubs+at)
	})
	return c, err
}

// patchExit writes the exit probe of region r of the function at addr;
// body is the trampoline's copy of the instructions before the ret.
func (e *engine) patchExit(tid int, as *space, code []byte, addr uint64, r instrument.ExitRegion, id uint32) (c instrument.SiteBytes, body [2]uint64, err error) {
	c, tramp, err := e.patchThrough(tid, as, code, addr, r.Off, r.Len, id, func(tramp, stubs uint64) ([]byte, []byte, error) {
		return instrument.ExitTramp(code, addr, r, tramp, stubs+stub.ExitSite)
	})
	if err != nil {
		return c, body, err
	}
	return c, [2]uint64{tramp, tramp + uint64(r.Ret-r.Off)}, nil
}

// patchThrough re-aims the n bytes at off of the function at addr at a
// new trampoline, which build makes (its bytes, and the bytes that jump
// to it) from its address and where the stub's code starts in its area;
// the site is recorded for detach and fork.
func (e *engine) patchThrough(tid int, as *space, code []byte, addr uint64, off, n int, id uint32,
	build func(tramp, stubs uint64) ([]byte, []byte, error)) (instrument.SiteBytes, uint64, error) {
	at := addr + uint64(off)
	a, tramp, stubs, err := e.newTramp(tid, as, at, id)
	if err != nil {
		return instrument.SiteBytes{}, 0, err
	}
	tr, jump, err := build(tramp, stubs.Via-stub.Via)
	if err != nil {
		return instrument.SiteBytes{}, 0, err
	}
	if err := as.writeCode(tid, tramp, tr); err != nil {
		return instrument.SiteBytes{}, 0, err
	}
	a.next += uint64(len(tr))
	orig := slices.Clone(code[off : off+n])
	if err := e.rewrite(tid, as, at, orig, jump); err != nil {
		return instrument.SiteBytes{}, 0, err
	}
	c := instrument.SiteBytes{At: at, Orig: orig, New: jump}
	as.inl.SetSite(c)
	as.inl.Tramps = append(as.inl.Tramps, [2]uint64{tramp, tramp + uint64(len(tr))})
	return c, tramp, nil
}

// prologueRefused: the function's first bytes cannot take the jump now
// (their shape, a thread stopped inside them, a breakpoint among them):
// its call sites may still take the probe (patchSites), leaving those
// bytes alone.
type prologueRefused struct{ reason string }

func (r prologueRefused) Error() string { return r.reason }

// inlineID is the id function fn's trampoline passes to the entry stub:
// its index, flagged when its arguments are recorded (--detail), in one
// ring slot when its parameters take three registers at most, with its
// role in the calling context (--context), and when it is a waiting call
// (its return and those of the frames open then are stale).
func (e *engine) inlineID(fn int) uint32 {
	id := e.ctxID(fn, uint32(fn))
	if e.s.Profile().IsWaitingFunc(fn) { // never counted (keepsTime)
		id |= stub.FlagWait
	}
	if !e.s.Selected(fn) {
		return id
	}
	if n := e.arityOf(fn); n >= 0 && n <= 3 {
		return id | stub.FlagDetail | stub.FlagArgs3
	}
	return id | stub.FlagDetail
}

// undoLeftover gives function sym of l its file's first bytes back if a
// profiler that was killed left its inline patch there.
func (e *engine) undoLeftover(tid int, as *space, l *loaded, sym instrument.Symbol) {
	if sym.Size == 0 {
		return
	}
	code, err := l.mod.ReadAt(sym.Value, int(sym.Size)+padLen(l.mod, sym))
	if err != nil {
		if code, err = l.mod.ReadAt(sym.Value, int(sym.Size)); err != nil {
			return
		}
	}
	as.undoing = l
	e.undoLeftoverIn(tid, as, sym.Value+l.bias, code)
	as.undoing = nil
}

// undoLeftoverIn compares the bytes at addr with code, the file's: a
// difference is either a patch a killed profiler left (its trampoline and
// stubs still work, so threads inside them or returning through them are
// fine: the function gets its file's bytes back) or an error.
func (e *engine) undoLeftoverIn(tid int, as *space, addr uint64, code []byte) error {
	cur := make([]byte, min(len(code), 32))
	if err := as.readText(tid, addr, cur); err != nil {
		return errors.New("code unreadable")
	}
	as.origBytes(addr, cur)
	if bytes.Equal(cur, code[:len(cur)]) {
		return nil
	}
	if !e.leftoverPatch(tid, as, addr, cur) {
		return errors.New("code in memory differs from its file")
	}
	n := len(cur) // the bytes up to the last that differs
	for n > 0 && cur[n-1] == code[n-1] {
		n--
	}
	if err := e.clearOf(tid, as, addr, n, e.threadRips(as)); err != nil {
		return err
	}
	if err := e.rewrite(tid, as, addr, cur[:n], code[:n]); err != nil {
		return errors.New("code in memory differs from its file")
	}
	e.stats.Leftover.Patches++
	return nil
}

// padLen is the number of bytes between a function's end and the next
// symbol (at most 32): alignment padding a short function's patch may use.
func padLen(m *instrument.Module, sym instrument.Symbol) int {
	end := sym.Value + sym.Size
	i := sort.Search(len(m.Symbols), func(i int) bool { return m.Symbols[i].Value >= end })
	if i < len(m.Symbols) {
		return int(min(32, m.Symbols[i].Value-end))
	}
	return 32
}

// leftoverPatch tells whether the bytes at a function's entry are an
// inline probe's jump (after an endbr64 or not) into an anonymous
// executable mapping: the patch of a profiler that was killed.
func (e *engine) leftoverPatch(tid int, as *space, addr uint64, cur []byte) bool {
	at := instrument.EntryPad(cur)
	if len(cur) < at+instrument.PatchLen || cur[at] != 0xe9 {
		return false
	}
	target := addr + uint64(at+instrument.PatchLen) + uint64(int64(int32(binary.LittleEndian.Uint32(cur[at+1:]))))
	if as.anon == nil {
		maps, err := instrument.ReadMaps(procfs.Tgid(tid))
		if err != nil {
			return false
		}
		for _, m := range maps {
			if m.Exec() && m.Path == "" {
				as.anon = append(as.anon, [2]uint64{m.Start, m.End})
			}
		}
	}
	for _, r := range as.anon {
		if target >= r[0] && target < r[1] {
			return true
		}
	}
	return false
}

// newTramp returns where the next trampoline for the function at addr
// goes (16-byte aligned, in area a within rel32 reach of it) and the
// stubs it uses: the one its id calls (stubFor), and via; the caller
// advances a.next past what it writes.
func (e *engine) newTramp(tid int, as *space, addr uint64, id uint32) (a *area, tramp uint64, stubs instrument.Stubs, err error) {
	if a, err = e.trampArea(tid, as, addr); err != nil {
		return nil, 0, stubs, err
	}
	stubAt, err := e.stubIn(tid, as.inl, a)
	if err != nil {
		return nil, 0, stubs, err
	}
	a.next = (a.next + 15) &^ 15
	return a, a.base + a.next, instrument.Stubs{Entry: e.stubFor(stubAt, id), Via: stubAt + stub.Via}, nil
}

// trampArea returns an area within rel32 reach of addr with room for a
// trampoline (and the entry stub's copy if the area has none yet).
func (e *engine) trampArea(tid int, as *space, addr uint64) (*area, error) {
	for _, a := range as.areas {
		// The cheap tests first: a process with many functions fills
		// area after area, each looked at again for every trampoline.
		n := uint64(instrument.TrampMax + 16)
		if dist(a.base, addr) >= near || a.next+n > a.codeEnd() {
			continue
		}
		if _, ok := as.inl.Stubs[a.base]; !ok {
			n += uint64(stub.Len()) + 64
		}
		if a.next+n <= a.codeEnd() {
			return a, nil
		}
	}
	return e.newArea(tid, as, addr)
}

// rewrite replaces the instructions at addr (bytes old) by new, of the
// same length, so that whenever the tracer dies the code is valid: an
// int3 guards the first byte while the others change, and the heal table
// holds the original bytes meanwhile (the handler puts them all back and
// rewinds). A word of text is written at once; a patch may span two.
// The table lists the bytes last first: the handler restores in table
// order, so the guard goes last, and another thread running into the
// function meanwhile traps (and waits for the handler) rather than run a
// jump whose displacement is half restored.
func (e *engine) rewrite(tid int, as *space, addr uint64, old, new []byte) error {
	if len(new) == 1 || as.heal == nil {
		return as.poke(tid, addr, new)
	}
	// Nothing runs the bytes meanwhile, and a tracer killed in one write
	// leaves them whole, old or new: no guard, no heal entries.
	if as.sole && (as.putText(addr, new) || as.pokeWhole(tid, addr, new) == nil) {
		return nil
	}
	// One look per page, not per byte: outside the modules a look reads
	// the process's maps.
	page, prot := ^uint64(0), byte(0)
	first := as.heal.Rewrite(tid, addr, old, func(a uint64) byte {
		if a&^0xfff != page {
			page, prot = a&^0xfff, as.protAt(tid, a)
		}
		return prot
	})
	defer as.heal.RewriteDone(tid, first, len(old))
	as.removed[addr] = true // a trap there meanwhile is ours: rewound, swallowed
	if err := as.poke(tid, addr, []byte{0xcc}); err != nil {
		return err
	}
	if err := as.poke(tid, addr+1, new[1:]); err != nil {
		as.poke(tid, addr, old[:1])
		return err
	}
	return as.poke(tid, addr, new[:1])
}

// poke writes text in space s as ptrace.PokeText does, through its
// process's memory, opened at the first write (through task tid) and kept
// open until closeText: a scan or a detach rewrites every probed
// function, the context gate arms and disarms breakpoints as threads come
// and go, and opening /proc/PID/mem for each write was most of what each
// cost.
func (s *space) poke(tid int, addr uint64, buf []byte) error {
	// Mid-rewrite a held thread has left only if the tracer went still
	// for parkAhead between two writes (stopped by a job control
	// signal, say).
	if err := s.keepParked(tid); err != nil {
		return err
	}
	return s.pokeText(tid, addr, buf)
}

// pokeText writes text through the process's memory held open (textOf),
// else as ptrace.PokeText does.
func (s *space) pokeText(tid int, addr uint64, buf []byte) error {
	if s.batch != nil {
		// Written now, and after the pending writes made before it.
		s.batch.put(addr, buf)
	}
	t, err := s.textOf(tid)
	if err != nil {
		return ptrace.PokeText(tid, addr, buf)
	}
	return t.Poke(tid, addr, buf)
}

// textOf is the process's memory open for writing (through task tid at
// the first write).
func (s *space) textOf(tid int) (*ptrace.Text, error) {
	if s.text == nil {
		t, err := ptrace.OpenText(tid)
		if err != nil {
			return nil, err
		}
		s.text = t
	}
	return s.text, nil
}

// pokeWhole writes text in space s with one write, all or nothing
// (ptrace.Text.PokeWhole).
func (s *space) pokeWhole(tid int, addr uint64, buf []byte) error {
	if err := s.keepParked(tid); err != nil {
		return err
	}
	t, err := s.textOf(tid)
	if err != nil {
		return err
	}
	// Never during a batch: putText holds every write within a page.
	return t.PokeWhole(addr, buf)
}

// closeText releases what poke keeps open: the space is gone or let go.
func (s *space) closeText() {
	if s.text != nil {
		s.text.Close()
		s.text = nil
	}
}

// unpatchInline puts every patched function's bytes back (its entry's or
// its call sites'), checking each.
func (e *engine) unpatchInline(tid int, as *space) {
	changes := as.inl.Changes()
	// Nothing runs in the space: every page goes back in one write, then
	// each change is read back.
	if as.sole && as.batch == nil && len(changes) > 1 {
		as.batch = newPending()
		for _, c := range changes {
			e.rewrite(tid, as, c.At, c.New, c.Orig)
		}
		if as.flushPending(tid) == nil {
			// What reads back as it should is done; the rest goes in
			// one by one below.
			seen := newPending()
			changes = slices.DeleteFunc(changes, func(c instrument.SiteBytes) bool { return seen.holds(tid, c.At, c.Orig) })
		}
	}
	for _, c := range changes {
		var err error
		for try := 0; try < 3; try++ {
			if err = e.rewrite(tid, as, c.At, c.New, c.Orig); err == nil {
				got := make([]byte, len(c.Orig))
				if err = ptrace.ReadMem(tid, c.At, got); err == nil && !bytes.Equal(got, c.Orig) {
					err = fmt.Errorf("reads back % x", got)
				}
			}
			if err == nil {
				break
			}
		}
		if err != nil {
			e.warn("could not restore the original bytes at %#x: %v", c.At, err)
		}
	}
	as.inl.Patches = map[uint64]*inline.Patch{}
	as.inl.Sites = map[uint64]instrument.SiteBytes{}
}

// stepPast single-steps the stopped thread of space as at rip, inside a
// function's first n bytes (the patch's, from at), until it
// leaves them, a few instructions at most: the patch then goes in, where
// a thread stopped there would have left the function a trap probe (a
// busy function, one thread in a few inside its first bytes at attach).
// It returns the thread's rip. A thread held in our code (heldRips) is
// not stepped. The bytes hold no instruction that enters the kernel or
// traps: the patch's plan refused those among the ones that run
// (instrument.PlanPatch). A signal that comes meanwhile stops the steps
// and is the thread's at its next resume.
func (e *engine) stepPast(as *space, rip, at uint64, n int) (uint64, bool) {
	const most = 16
	if len(as.areas) == 0 {
		return 0, false
	}
	end := at + uint64(n)
	for _, t := range e.threads {
		var regs unix.PtraceRegs
		if t.proc.as != as || ptrace.GetRegs(t.tid, &regs) != nil || regs.Rip != rip {
			continue
		}
		for steps := 0; regs.Rip > at && regs.Rip < end; steps++ {
			if steps == most || ptrace.Step(t.tid) != nil {
				return 0, false
			}
			ws, err := ptrace.Wait(t.tid)
			if err != nil || !ws.Stopped() {
				return 0, false
			}
			if sig := ws.StopSignal(); sig != unix.SIGTRAP || ptrace.Event(ws) != 0 {
				if ptrace.Event(ws) == 0 {
					t.pendingSig = int(sig) // in its signal-delivery stop: resume gives it
				}
				return 0, false
			}
			if ptrace.GetRegs(t.tid, &regs) != nil {
				return 0, false
			}
		}
		// The steps leave the trap flag set until the thread next resumes
		// (stepOutOf): one injected getpid clears it, in our code only.
		e.injectSyscall(t.tid, as.areas[0].base, unix.SYS_GETPID)
		return regs.Rip, true
	}
	return 0, false
}

// threadRips returns the rip of every stopped thread of space as, and of
// every parked thread we do not trace: no function is patched across a
// thread's rip.
func (e *engine) threadRips(as *space) []uint64 {
	rips := as.heldRips()
	for _, t := range e.threads {
		var regs unix.PtraceRegs
		if t.proc.as == as && ptrace.GetRegs(t.tid, &regs) == nil {
			rips = append(rips, regs.Rip)
		}
	}
	return rips
}
