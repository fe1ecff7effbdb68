package attach

import (
	"encoding/binary"

	"github.com/profile-dev/profile/attach/internal/ptrace"
	"github.com/profile-dev/profile/attach/internal/stub"
	"github.com/profile-dev/profile/model"
)

// gating is the calling context's state: ctxComp the context's
// components by function (their index), ctxGated the functions recorded
// only inside it.
type gating struct {
	ctxComp  map[int]int
	ctxGated map[int]bool
}

// A calling context (Options.Context, --context 'A>B') gates functions:
// they are recorded only while its components are open on the thread's
// stack, in order. A thread's count of open components is the number k
// such that components 0..k-1 are open, found greedily: component k's
// entry opens it when the count is k, and its return (or a longjmp past
// it) sets the count back to k. With inline probes the stubs keep the
// count (T_CTX, probe.S); the tracer keeps it for frames trap probes saw.

// ctxFrame is a component's frame opened at a trap stop: when the stack
// pointer passes sp, the count goes back to k.
type ctxFrame struct {
	sp uint64
	k  int
}

// noteContext records fn's role in the context (instrument.Context.Role).
func (e *engine) noteContext(fn, k int, gated bool) {
	if e.ctxComp == nil {
		e.ctxComp, e.ctxGated = map[int]int{}, map[int]bool{}
	}
	if k >= 0 {
		e.ctxComp[fn] = k
	} else if gated {
		e.ctxGated[fn] = true
	}
}

// ctxID adds fn's context role to its inline id.
func (e *engine) ctxID(fn int, id uint32) uint32 {
	if k, ok := e.ctxComp[fn]; ok {
		return id | stub.FlagCtx | stub.FlagCtxOpen | uint32(k)<<stub.CtxShift
	}
	if e.ctxGated[fn] {
		return id | stub.FlagCtx | uint32(e.opt.Context.Len())<<stub.CtxShift
	}
	return id
}

// ctxCount is thread t's count of open components: the stubs' for a
// thread with a ring, the tracer's otherwise. ok is false when it cannot
// be read.
func (e *engine) ctxCount(t *thread) (n int, ok bool) {
	if t.proc.as.inl != nil {
		state, ok := threadState(t)
		var w [8]byte
		if !ok || ptrace.ReadMem(t.tid, state+stub.TCtx, w[:]) != nil {
			return 0, false
		}
		return int(binary.LittleEndian.Uint64(w[:])), true
	}
	return t.ctxN, true
}

// setCtxCount sets t's count to n, arming the gated functions' entry
// breakpoints of its space when a first thread enters the whole context,
// disarming them when the last leaves.
func (e *engine) setCtxCount(t *thread, n int) {
	if t.proc.as.inl != nil {
		if state, ok := threadState(t); ok {
			var w [8]byte
			binary.LittleEndian.PutUint64(w[:], uint64(n))
			ptrace.WriteMem(t.tid, state+stub.TCtx, w[:])
		}
		return
	}
	full := e.opt.Context.Len()
	was := t.ctxN >= full
	t.ctxN = n
	if now := n >= full; now != was {
		as := t.proc.as
		if now {
			as.ctxIn++
		} else {
			as.ctxIn--
		}
		e.gate(t.tid, as)
	}
}

// inContext tells whether t is inside the whole context.
func (e *engine) inContext(t *thread) bool {
	n, ok := e.ctxCount(t)
	return ok && n >= e.opt.Context.Len()
}

// ctxPassed closes the component frames of t the stack pointer sp has
// passed: at a return stop sp is above the returned frame's, at an entry
// stop above frames a longjmp abandoned.
func (e *engine) ctxPassed(t *thread, sp uint64) {
	for len(t.ctx) > 0 && t.ctx[len(t.ctx)-1].sp < sp {
		f := t.ctx[len(t.ctx)-1]
		t.ctx = t.ctx[:len(t.ctx)-1]
		if n, ok := e.ctxCount(t); ok && n > f.k {
			e.setCtxCount(t, f.k)
		}
	}
}

// ctxEnter opens fn's component for t if the ones before it are open: fn
// was entered with its return address at sp, the frame returning through
// a trap, or through the return stub when stub is set (a frame in flight
// at attach): its shadow entry is marked then, as the entry stub does.
func (e *engine) ctxEnter(t *thread, fn int, sp uint64, stub bool) {
	k, ok := e.ctxComp[fn]
	if !ok {
		return
	}
	if n, ok := e.ctxCount(t); !ok || n != k {
		return
	}
	if stub {
		if !e.markShadow(t, sp, k) {
			return
		}
	} else {
		t.ctx = append(t.ctx, ctxFrame{sp: sp, k: k})
	}
	e.setCtxCount(t, k+1)
}

// markShadow marks t's top shadow entry, for the frame at sp, as opening
// component k.
func (e *engine) markShadow(t *thread, sp uint64, k int) bool {
	state, depth, ok := shadowDepth(t)
	if !ok || depth == 0 || depth > stub.ShadowEntries {
		return false
	}
	var w [16]byte
	at := state + stub.TShadow + (depth-1)*16
	if ptrace.ReadMem(t.tid, at, w[:]) != nil || binary.LittleEndian.Uint64(w[:8]) != sp {
		return false
	}
	ret := binary.LittleEndian.Uint64(w[8:])
	if ret&stub.CtxMark != 0 {
		return false
	}
	binary.LittleEndian.PutUint64(w[8:], ret|stub.CtxMark|uint64(k)<<56)
	return ptrace.WriteMem(t.tid, at+8, w[8:]) == nil
}

// gated tells whether the entry of function fn counts only in the context.
func (e *engine) gated(fn int) bool { return fn != model.None && e.ctxGated[fn] }

// gate arms the gated functions' entry breakpoints of space as while
// some thread of it is inside the context, and disarms them otherwise;
// tid is a stopped thread of as. A thread stopped at one meanwhile finds
// the breakpoint gone (as.removed): rewound, it runs on untraced.
func (e *engine) gate(tid int, as *space) {
	want := as.ctxIn > 0
	if want == as.ctxArmed || as.inl != nil {
		return
	}
	as.ctxArmed = want
	for addr, b := range as.gated {
		if want {
			if _, ok := as.bps[addr]; ok {
				continue
			}
			e.healAdd(tid, as, addr, b.Orig)
			if as.poke(tid, addr, []byte{0xcc}) == nil {
				as.bps[addr] = b
				delete(as.removed, addr)
			}
		} else if cur, ok := as.bps[addr]; ok && cur == b {
			e.remove(tid, as, b)
		}
	}
}

// gateEntry takes the gated function's new entry breakpoint b of a trap
// space into the gate's care: disarmed unless a thread is in the context.
func (e *engine) gateEntry(tid int, as *space, b *bp) {
	if as.inl != nil {
		return // checked at each stop: the stubs keep the count
	}
	if as.gated == nil {
		as.gated = map[uint64]*bp{}
	}
	if b.IsReturn || b.LinkerHook || b.Special {
		return // a breakpoint of others' too: stays
	}
	as.gated[b.Addr] = b
	if !as.ctxArmed {
		e.remove(tid, as, b)
	}
}

// gateReturn takes a return site into the gate's care when only gated
// functions return there (a direct call of one, its breakpoint new for
// it), and out of it when another function returns there too: calls of
// a gated function outside the context stop at neither end.
func (e *engine) gateReturn(as *space, rb *bp, gated, fresh bool) {
	if as.inl != nil {
		return
	}
	if !gated {
		delete(as.gated, rb.Addr)
		return
	}
	if fresh && rb.Fn == model.None && !rb.Special && !rb.LinkerHook {
		if as.gated == nil {
			as.gated = map[uint64]*bp{}
		}
		as.gated[rb.Addr] = rb
	}
}

// ctxForked gives the first thread nt of a forked (or vfork) child the
// context of the forking thread t: the child runs on in the same frames.
func (e *engine) ctxForked(t, nt *thread, shared bool) {
	if e.opt.Context == nil {
		return
	}
	nt.ctx = append([]ctxFrame(nil), t.ctx...)
	if nt.proc.as.inl != nil {
		return // the stubs' count is in the copied memory
	}
	as := nt.proc.as
	if !shared {
		as.ctxIn = 0
	}
	nt.ctxN = 0
	e.setCtxCount(nt, t.ctxN)
	e.gate(nt.tid, as)
}

// ctxGone forgets a thread that is gone: it is no longer in the context.
// The breakpoints stay armed until the next change (no thread to write
// with): a stop there outside the context is counted and let go.
func (e *engine) ctxGone(t *thread) {
	if e.opt.Context == nil || t.proc.as.inl != nil {
		return
	}
	if t.ctxN >= e.opt.Context.Len() {
		t.proc.as.ctxIn--
	}
	t.ctxN, t.ctx = 0, nil
}
