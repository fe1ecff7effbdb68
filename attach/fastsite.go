package attach

import (
	"encoding/binary"

	"github.com/profile-dev/profile/attach/internal/inline"
	"github.com/profile-dev/profile/attach/internal/ptrace"
	"github.com/profile-dev/profile/instrument"
)

// A busy call site's own fast path (docs/design.md, Counting fast path):
// once a direct call of a counted function holds a slot of its fast path,
// the call itself is re-aimed at a copy of the fast path for that slot
// alone (instrument.FastSite), so the owner's calls from there take no
// jump through the function's entry and trampoline and compare no return
// address. It counts in the slot's counter, so the counts are read as
// before; another thread's call goes on to the entry and is counted there
// by the same return address, which the re-aimed call leaves as it was.
// The call's four displacement bytes change with every thread stopped;
// the site is recorded with the call sites patchSites re-aims, and a
// detach (or a later profiler, if this one is killed) puts it back.

// fastSite gives slot k of fast path f, that of function p, a call site
// fast path when its caller's call is a direct call of the function's
// entry in a module's code, as the file has it: through stopped task tid,
// every thread stopped. Tried once per slot.
func (e *engine) fastSite(tid int, as *space, f *fastFn, p *inline.Patch, k int) {
	if f.siteTried[k] || f.rets[k] == 0 {
		return
	}
	f.siteTried[k] = true
	is := as.inl
	at := f.rets[k] - instrument.PatchLen
	// The call and the function in one module: unmapped together, the
	// call never left leading into a stub whose function is gone.
	l := as.moduleAt(at)
	if l == nil || as.moduleAt(f.rets[k]-1) != l || as.moduleAt(p.Patch.Addr) != l {
		return
	}
	if _, ok := is.Sites[at]; ok {
		return
	}
	for _, q := range is.Patches {
		if q.Replaced(at, instrument.PatchLen) {
			return // inside an entry patch: the call runs relocated
		}
	}
	cur, err := fileBytesAt(tid, as, l, at, instrument.PatchLen)
	if err != nil || cur[0] != 0xe8 {
		return
	}
	if target := f.rets[k] + uint64(int64(int32(binary.LittleEndian.Uint32(cur[1:])))); target != p.Patch.Addr {
		return
	}
	a := as.areaOf(f.at)
	stubAt := (a.next + 15) &^ 15
	var body [2]uint64
	code, err := instrument.FastSite(a.base+stubAt, p.Patch.Addr, a.ownerWord(), f.counterAt(is, k),
		func(to uint64) ([]byte, error) {
			b, err := instrument.RelocateMoved(p.Moved, p.Patch.At, to, p.Patch.InPlace)
			body = [2]uint64{to, to + uint64(len(b))}
			return b, err
		})
	if err != nil || stubAt+uint64(len(code)) > a.codeEnd() {
		return
	}
	rel := int64(a.base+stubAt) - int64(f.rets[k])
	if rel != int64(int32(rel)) || ptrace.WriteMem(tid, a.base+stubAt, code) != nil {
		return
	}
	a.next = stubAt + uint64(len(code))
	call := []byte{0xe8, 0, 0, 0, 0}
	binary.LittleEndian.PutUint32(call[1:], uint32(int32(rel)))
	// Every thread is stopped, none inside the call: one write of its
	// displacement re-aims it.
	if as.poke(tid, at+1, call[1:]) != nil {
		return
	}
	stub := [2]uint64{a.base + stubAt, a.base + stubAt + uint64(len(code))}
	is.Tramps = append(is.Tramps, stub)
	f.sites = append(f.sites, stub)
	f.bodies = append(f.bodies, body)
	as.fast.paths++
	is.SetSite(instrument.SiteBytes{At: at, Orig: cur, New: call})
	e.stats.Probes.FastSites++
}
