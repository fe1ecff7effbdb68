package attach

import (
	"encoding/binary"
	"sync/atomic"
	"unsafe"

	"github.com/profile-dev/profile/instrument"
)

// Layout of the inline probes' memory, mirrored from inlinecode/probe.S.
const (
	// The data block: private to the process (a forked child gets its
	// copy, with its shadow stacks as they were at the fork).
	dRetstub      = 0x00
	dDropping     = 0x08
	dStallLimit   = 0x10
	dUnregistered = 0x18
	dShadowFull   = 0x20
	dLost         = 0x28
	dSlowTicks    = 0x30 // detail arguments: a frame must last this long (--slow)
	dDefer        = 0x38 // nonzero: detail arguments wait in side records
	dCondAt       = 0x40 // --detail-if's register: 0 none, condRet, else its offset in the entry stub's frame
	dCondType     = 0x48 // 0 i32, 1 u32, 2 i64, 3 u64
	dCondMask     = 0x50 // holds if below (bit 0), equal (bit 1), above (bit 2)
	dCondValue    = 0x58
	condRet       = 8
	dName         = 0x800 // the memfd's name, for memfd_create
	ringsName     = "profile-rings\x00"
	dTable        = 0x1000
	tableSize     = 4096
	dStates       = 0x20000
	stateSize     = 64 << 10
	maxSlots      = 1024
	dataSize      = dStates + maxSlots*stateSize
	// Side records (with dDefer): one per shadow entry, after the
	// states, in a data block that much bigger.
	dSides     = dataSize
	sideRecord = 64
	sideSize   = 256 << 10
	sidesSize  = maxSlots * sideSize

	tRing         = 0x00
	tDepth        = 0x08
	tStackLo      = 0x10
	tStackHi      = 0x18
	tCap          = 0x20
	tCtx          = 0x28 // context components open (--context)
	tSide         = 0x30 // the thread's side records, 0 if none
	tShadow       = 0x40
	shadowEntries = (stateSize - tShadow) / 16

	// The rings: one memfd shared by the target and the tracer.
	rHead       = 0x00
	rTail       = 0x40
	rDropped    = 0x80
	rStallTicks = 0x88
	rStalls     = 0x90
	rSkipped    = 0x98 // calls outside the context (--context), not recorded
	rBeat       = 0xc0 // the tracer's heartbeat: a stub waiting on a full ring gives up on a tracer that stopped beating
	rEvents     = 0x1000
	ringEvents  = 32768
	eventSize   = 32
	ringStride  = rEvents + ringEvents*eventSize
	ringsSize   = maxSlots * ringStride

	// Stub offsets in probe.bin.
	stubEntry   = 0x000
	stubRet     = 0xc60
	stubDataPtr = 0xfd0

	exitID      = 0xffffffff
	stallID     = 0xfffffffe // a stub waited for room: tick start, sp end
	argsID      = 0xfffffffd // the argument registers of the entry before
	argsForID   = 0xfffffffc // a frame's arguments (its slot in sp), one slot follows
	argsFor2ID  = 0xfffffffb // ... two slots follow
	flagRestore = 0x80000000
	flagDetail  = 0x40000000 // record the arguments (--detail)
	flagArgs3   = 0x20000000 // ... rdi, rsi and rdx only, in one slot
	flagCtx     = 0x10000000 // a context role (--context), in bits 24-26:
	flagCtxOpen = 0x08000000 // ... component k opens the context, or
	ctxShift    = 24         // ... without flagCtxOpen, recorded only when n are open
	ctxMax      = instrument.MaxComponents
	fnMask      = 1<<ctxShift - 1
	// ctxMark marks a shadow entry's return address whose frame opened
	// component k (in bits 56-62); detailMark one whose side record holds
	// its arguments. The address is the low 48 bits.
	ctxMark    = 1 << 63
	detailMark = 1 << 55
	addrMask   = 1<<48 - 1
)

// tableHash is the stub's hash of a thread pointer (LOOKUP in probe.S).
func tableHash(fs uint64) int {
	return int(((fs >> 12) * 0x5bd1e995) >> 52)
}

// ring is the tracer's view of one thread's ring in its mapping of the
// memfd.
type ring struct{ mem []byte }

func (r ring) word(off int) *uint64 { return (*uint64)(unsafe.Pointer(&r.mem[off])) }

// ringEvent is one decoded ring entry.
type ringEvent struct {
	id   uint32 // function id, exitID for a return, stallID for a wait
	tick uint64
	// sp is the stack pointer at an entry or exit; a wait's and a
	// frame's arguments put another word there (stallEnd, slot). ret is
	// the return address at an entry, rax at an exit.
	sp, ret uint64
	// args are a detail entry's argument registers, or an argsForID
	// event's, nil for others (a buffer of the drain's, valid during the
	// call only).
	args *[6]uint64
}

// stallEnd is a wait's (stallID) end, in ticks: the stub puts it where
// an entry puts its stack pointer.
func (ev *ringEvent) stallEnd() uint64 { return ev.sp }

// slot is the return-address slot of the frame whose arguments an
// argsForID event carries, put where an entry puts its stack pointer.
func (ev *ringEvent) slot() uint64 { return ev.sp }

// drain hands every committed event to f, in order, and frees them. The
// event is the drain's, valid during the call only: a copy per event cost
// the drain, the tracer's bottleneck, a fifth of its speed. It reads the
// head once and publishes the tail once per batch: a word the
// stubs write and one they read, touched per event, would bounce between
// the CPUs of the target and the tracer. A slot reserved by a stub that a
// signal interrupted is not committed yet: everything behind it waits.
func (r ring) drain(f func(*ringEvent)) int {
	var ev ringEvent
	var args [6]uint64
	tail := atomic.LoadUint64(r.word(rTail))
	head := atomic.LoadUint64(r.word(rHead))
	n := 0
	for ; tail != head; tail++ {
		off := rEvents + int(tail%ringEvents)*eventSize
		w0 := atomic.LoadUint64(r.word(off))
		if uint32(w0) != uint32(tail+1) {
			break
		}
		b := r.mem[off:]
		ev = ringEvent{id: uint32(w0 >> 32), tick: binary.LittleEndian.Uint64(b[8:]),
			sp: binary.LittleEndian.Uint64(b[16:]), ret: binary.LittleEndian.Uint64(b[24:])}
		switch {
		case ev.id == argsForID || ev.id == argsFor2ID:
			// A frame's deferred arguments (sp: its slot).
			slots := uint64(1 + argsForID - ev.id)
			if r.args(tail, slots, &args) {
				ev.args = &args
			}
			tail += slots
			ev.id = argsForID
		case ev.id < argsFor2ID:
			if ev.id&flagDetail != 0 {
				// Its argument slots were committed before it.
				slots := uint64(2)
				if ev.id&flagArgs3 != 0 {
					slots = 1
				}
				if r.args(tail, slots, &args) {
					ev.args = &args
				}
				tail += slots
			}
			ev.id &= fnMask
		}
		f(&ev)
		n++
		if n%4096 == 0 {
			atomic.StoreUint64(r.word(rTail), tail+1) // room for a waiting stub
		}
	}
	atomic.StoreUint64(r.word(rTail), tail)
	return n
}

// args reads the argument slots (one or two) after the entry at index i.
func (r ring) args(i, slots uint64, out *[6]uint64) bool {
	for k := uint64(1); k <= slots; k++ {
		off := rEvents + int((i+k)%ringEvents)*eventSize
		w0 := atomic.LoadUint64(r.word(off))
		if w0 != uint64(argsID)<<32|uint64(uint32(i+k+1)) {
			return false
		}
		for j := range 3 {
			out[3*(k-1)+uint64(j)] = binary.LittleEndian.Uint64(r.mem[off+8+8*j:])
		}
	}
	return true
}

// counters returns the ring's drop, stall and skip counts.
func (r ring) counters() (dropped, stalls, stallTicks, skipped uint64) {
	return atomic.LoadUint64(r.word(rDropped)), atomic.LoadUint64(r.word(rStalls)), atomic.LoadUint64(r.word(rStallTicks)),
		atomic.LoadUint64(r.word(rSkipped))
}

// beat tells the stubs waiting on this ring that the tracer lives.
func (r ring) beat() { atomic.AddUint64(r.word(rBeat), 1) }

// reset hands a drained ring to a new owner. Indices keep counting from
// where the last owner stopped, so a stale commit word (index+1 of an old
// event) never matches the new owner's next index.
func (r ring) reset() {
	atomic.StoreUint64(r.word(rTail), atomic.LoadUint64(r.word(rHead)))
	r.resetCounters()
}

func (r ring) resetCounters() {
	for _, off := range []int{rDropped, rStallTicks, rStalls, rSkipped} {
		atomic.StoreUint64(r.word(off), 0)
	}
}

// Every shadow entry has its side record.
var _ [sideSize - shadowEntries*sideRecord]struct{}

// A component's index fits below the context flags.
var _ [flagCtxOpen>>ctxShift - 1 - ctxMax]struct{}

// Where the entry stub saved the argument registers (E_RDI ... in
// probe.S): a condition on an argument is read there.
const (
	eR9  = 16
	eR8  = 24
	eRDI = 32
	eRSI = 40
	eRDX = 48
	eRCX = 56
)
