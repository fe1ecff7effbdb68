package inline

import (
	"encoding/binary"
	"sync/atomic"
	"unsafe"

	"github.com/profile-dev/profile/attach/internal/stub"
)

// Ring is the tracer's view of one thread's ring in its mapping of the
// memfd.
type Ring struct{ mem []byte }

func (r Ring) word(off int) *uint64 { return (*uint64)(unsafe.Pointer(&r.mem[off])) }

// Event is one decoded ring entry.
type Event struct {
	ID   uint32 // function id, stub.ExitID for a return, stub.StallID for a wait
	Tick uint64
	// SP is the stack pointer at an entry or exit; a wait's and a
	// frame's arguments put another word there (StallEnd, Slot). Ret is
	// the return address at an entry, rax at an exit.
	SP, Ret uint64
	// Args are a detail entry's argument registers, or a stub.ArgsForID
	// event's, nil for others (a buffer of the drain's, valid during the
	// call only).
	Args *[6]uint64
}

// StallEnd is a wait's (stub.StallID) end, in ticks: the stub puts it where
// an entry puts its stack pointer.
func (ev *Event) StallEnd() uint64 { return ev.SP }

// Counted is the function a stub.CountedID event counts a call of: the
// stub puts its id where an entry puts its stack pointer (Ret is the
// call's return address).
func (ev *Event) Counted() uint32 { return uint32(ev.SP) }

// Slot is the return-address slot of the frame whose arguments an
// stub.ArgsForID event carries, put where an entry puts its stack pointer.
func (ev *Event) Slot() uint64 { return ev.SP }

// Drain hands every committed event to f, in order, and frees them. The
// event is the drain's, valid during the call only: a copy per event cost
// the drain, the tracer's bottleneck, a fifth of its speed. It reads the
// head once and publishes the tail once per batch: a word the
// stubs write and one they read, touched per event, would bounce between
// the CPUs of the target and the tracer. A slot reserved by a stub that a
// signal interrupted is not committed yet: everything behind it waits.
func (r Ring) Drain(f func(*Event)) int {
	var ev Event
	var args [6]uint64
	tail := atomic.LoadUint64(r.word(stub.RTail))
	head := atomic.LoadUint64(r.word(stub.RHead))
	n := 0
	for ; tail != head; tail++ {
		off := stub.REvents + int(tail%stub.RingEvents)*stub.EventSize
		w0 := atomic.LoadUint64(r.word(off))
		if uint32(w0) != uint32(tail+1) {
			break
		}
		b := r.mem[off:]
		ev = Event{ID: uint32(w0 >> 32), Tick: binary.LittleEndian.Uint64(b[8:]),
			SP: binary.LittleEndian.Uint64(b[16:]), Ret: binary.LittleEndian.Uint64(b[24:])}
		switch {
		case ev.ID == stub.ArgsForID || ev.ID == stub.ArgsFor2ID:
			// A frame's deferred arguments (sp: its slot).
			slots := uint64(1 + stub.ArgsForID - ev.ID)
			if r.args(tail, slots, &args) {
				ev.Args = &args
			}
			tail += slots
			ev.ID = stub.ArgsForID
		case ev.ID < stub.CountedID:
			if ev.ID&stub.FlagDetail != 0 {
				// Its argument slots were committed before it.
				slots := uint64(2)
				if ev.ID&stub.FlagArgs3 != 0 {
					slots = 1
				}
				if r.args(tail, slots, &args) {
					ev.Args = &args
				}
				tail += slots
			}
			ev.ID &= stub.FnMask
		}
		f(&ev)
		n++
		if n%4096 == 0 {
			atomic.StoreUint64(r.word(stub.RTail), tail+1) // room for a waiting stub
		}
	}
	atomic.StoreUint64(r.word(stub.RTail), tail)
	return n
}

// Drained tells whether every event reserved in the ring so far has been
// drained: a stub stamps its event after reserving it, so an event
// reserved later is stamped later than now.
func (r Ring) Drained() bool {
	return atomic.LoadUint64(r.word(stub.RHead)) == atomic.LoadUint64(r.word(stub.RTail))
}

// args reads the argument slots (one or two) after the entry at index i.
func (r Ring) args(i, slots uint64, out *[6]uint64) bool {
	for k := uint64(1); k <= slots; k++ {
		off := stub.REvents + int((i+k)%stub.RingEvents)*stub.EventSize
		w0 := atomic.LoadUint64(r.word(off))
		if w0 != uint64(stub.ArgsID)<<32|uint64(uint32(i+k+1)) {
			return false
		}
		for j := range 3 {
			out[3*(k-1)+uint64(j)] = binary.LittleEndian.Uint64(r.mem[off+8+8*j:])
		}
	}
	return true
}

// Counters returns the ring's drop, stall and skip counts.
func (r Ring) Counters() (dropped, stalls, stallTicks, skipped uint64) {
	return atomic.LoadUint64(r.word(stub.RDropped)), atomic.LoadUint64(r.word(stub.RStalls)), atomic.LoadUint64(r.word(stub.RStallTicks)),
		atomic.LoadUint64(r.word(stub.RSkipped))
}

// Beat tells the stubs waiting on this ring that the tracer lives.
func (r Ring) Beat() { atomic.AddUint64(r.word(stub.RBeat), 1) }

// Reset hands a drained ring to a new owner. Indices keep counting from
// where the last owner stopped, so a stale commit word (index+1 of an old
// event) never matches the new owner's next index.
func (r Ring) Reset() {
	atomic.StoreUint64(r.word(stub.RTail), atomic.LoadUint64(r.word(stub.RHead)))
	r.ResetCounters()
}

// ResetCounters zeroes the drop, stall and skip counts.
func (r Ring) ResetCounters() {
	for _, off := range []int{stub.RDropped, stub.RStallTicks, stub.RStalls, stub.RSkipped} {
		atomic.StoreUint64(r.word(off), 0)
	}
}

// Counts hands f each entry of the ring's count table (the counting
// probe's): a call site's return address, the counted function's id and
// its calls so far. An entry whose id is not written yet is skipped (its
// count is 0 until it is).
func (r Ring) Counts(f func(ret uint64, id uint32, calls uint64)) {
	for i := range stub.CountEntries {
		off := stub.RCounts + i*stub.CountSize
		ret := atomic.LoadUint64(r.word(off))
		if ret == 0 {
			continue
		}
		id, calls := atomic.LoadUint64(r.word(off+8)), atomic.LoadUint64(r.word(off+16))
		if id != 0 && calls != 0 {
			f(ret, uint32(id)&stub.FnMask, calls) // flags the trampoline kept from its timed probe (FlagExit) go
		}
	}
}

// ClearCounts empties the count table for the ring's next owner (the
// tracer reads it first).
func (r Ring) ClearCounts() {
	for i := range stub.CountEntries {
		off := stub.RCounts + i*stub.CountSize
		if atomic.LoadUint64(r.word(off)) != 0 {
			clear(r.mem[off : off+stub.CountSize])
		}
	}
}
