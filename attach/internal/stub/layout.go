package stub

import (
	"bytes"
	_ "embed"
	"encoding/binary"

	"golang.org/x/arch/x86/x86asm"

	"github.com/profile-dev/profile/instrument"
)

// Layout of the inline probes' memory, mirrored from inlinecode/probe.S (checked by
// TestLayoutMatchesAssembly).
const (
	// The data block: private to the process (a forked child gets its
	// copy, with its shadow stacks as they were at the fork).
	DRetstub      = 0x00
	DDropping     = 0x08
	DStallLimit   = 0x10
	DUnregistered = 0x18
	DShadowFull   = 0x20
	DLost         = 0x28
	DSlowTicks    = 0x30 // detail arguments: a frame must last this long (--slow)
	DDefer        = 0x38 // nonzero: detail arguments wait in side records
	DCondAt       = 0x40 // --detail-if's register: 0 none, CondRet, else its offset in the entry stub's frame
	DCondType     = 0x48 // 0 i32, 1 u32, 2 i64, 3 u64
	DCondMask     = 0x50 // holds if below (bit 0), equal (bit 1), above (bit 2)
	DCondValue    = 0x58
	// DLifeline: the address of the lifeline word in the rings (Lifeline):
	// a stub waiting on a full ring gives up at once when the kernel marked
	// the tracer's thread dead there (attach/internal/lifeline), setting
	// DDropping to 2.
	DLifeline = 0x60
	CondRet   = 8
	DName     = 0x800 // the memfd's name, for memfd_create
	RingsName = "profile-rings\x00"
	DTable    = 0x1000
	TableSize = 4096
	DStates   = 0x20000
	StateSize = 64 << 10
	MaxSlots  = 1024
	DataSize  = DStates + MaxSlots*StateSize
	// Side records (with DDefer): one per shadow entry, after the
	// states, in a data block that much bigger.
	DSides     = DataSize
	SideRecord = 64
	SideSize   = 256 << 10
	SidesSize  = MaxSlots * SideSize

	TRing    = 0x00
	TDepth   = 0x08
	TStackLo = 0x10
	TStackHi = 0x18
	TCap     = 0x20
	TCtx     = 0x28 // context components open (--context)
	TSide    = 0x30 // the thread's side records, 0 if none
	// TStale: the thread's shadow entries below this index were open
	// when a waiting call returned; their returns go back to the caller
	// by a ret (docs/design.md, Stale returns).
	TStale        = 0x38
	TShadow       = 0x40
	ShadowEntries = (StateSize - TShadow) / 16

	// The rings: one memfd shared by the target and the tracer.
	RHead       = 0x00
	RTail       = 0x40
	RDropped    = 0x80
	RStallTicks = 0x88
	RStalls     = 0x90
	RSkipped    = 0x98 // calls outside the context (--context), not recorded
	RBeat       = 0xc0 // the tracer's heartbeat: a stub waiting on a full ring gives up on a tracer that stopped beating
	REvents     = 0x1000
	RingEvents  = 32768
	EventSize   = 32
	// The count table (the counting probe's, --counted), after the
	// events: per entry {return address, id, calls, 0}.
	RCounts      = REvents + RingEvents*EventSize
	CountBits    = 13
	CountEntries = 1 << CountBits
	CountSize    = 32
	RingStride   = RCounts + CountEntries*CountSize
	// The counting probe's fast paths' calls (attach/fastcount.go), after
	// the rings: a line of FastCountLine bytes per function, a word per
	// call site, in no ring (a fast path counts for a process's one
	// thread). In the memfd, they outlive the process and its image.
	FastCounts     = MaxSlots * RingStride
	FastCountLine  = 64
	FastCountLines = 4096
	// Lifeline: the node of the tracer's lifeline for this process
	// (attach/internal/lifeline), on a page of its own.
	Lifeline  = FastCounts + FastCountLines*FastCountLine
	RingsSize = Lifeline + 4096

	// Stub offsets in probe.bin.
	Entry = 0x000
	// Via is where a trampoline goes when the entry stub hijacked the
	// return: a jump to the in-use copy's ViaCall, which calls the rest
	// of the trampoline with the return stub's address as its return
	// address.
	Via      = 0xd00
	ViaCall  = 0xd06
	RetStub  = 0xd0a
	Count    = 0x10be // the counting probe's stub
	ExitSite = 0x13fb // an exit probe's stub (FlagExit)
	TailSite = 0x1779 // a tail jump's, in a function with exit probes
	DataPtr  = 0x1840
	ViaPtr   = 0x1848 // the in-use copy's ViaCall

	ExitID      = 0xffffffff
	StallID     = 0xfffffffe // a stub waited for room: tick start, sp end
	ArgsID      = 0xfffffffd // the argument registers of the entry before
	ArgsForID   = 0xfffffffc // a frame's arguments (its slot in sp), one slot follows
	ArgsFor2ID  = 0xfffffffb // ... two slots follow
	CountedID   = 0xfffffffa // a counted call its count table had no room for: the id in sp, the return address
	FlagRestore = 0x80000000
	FlagDetail  = 0x40000000 // record the arguments (--detail)
	FlagArgs3   = 0x20000000 // ... rdi, rsi and rdx only, in one slot
	FlagCtx     = 0x10000000 // a context role (--context), in bits 24-26:
	FlagCtxOpen = 0x08000000 // ... component k opens the context, or
	CtxShift    = 24         // ... without FlagCtxOpen, recorded only when n are open
	CtxMax      = instrument.MaxComponents
	FlagWait    = 0x00800000 // a waiting call: its return and those below it are stale
	FlagExit    = 0x00400000 // exit probes at its returns: no hijack
	FnMask      = FlagExit - 1
	// CtxMark marks a shadow entry's return address whose frame opened
	// component k (in bits 56-62); DetailMark one whose side record holds
	// its arguments. The address is the low 48 bits.
	// InFlightMark marks one the tracer made for a frame running at
	// attach, which no call from Via made: its return goes back by a
	// jump (probe.S).
	// TailMark marks a count table entry's return address (or a COUNTED
	// event's) that a tail jump's call counts for: the jumping frame's
	// call site, where no call returns to the counted function itself (a
	// fast path there would never match).
	TailMark     = 1 << 63
	CtxMark      = 1 << 63
	DetailMark   = 1 << 55
	InFlightMark = 1 << 54
	AddrMask     = 1<<48 - 1
)

// TableHash is the stub's hash of a thread pointer (LOOKUP in probe.S).
func TableHash(fs uint64) int {
	return int(((fs >> 12) * 0x5bd1e995) >> 52)
}

// Every shadow entry has its side record.
var _ [SideSize - ShadowEntries*SideRecord]struct{}

// A component's index fits below the context flags.
var _ [FlagCtxOpen>>CtxShift - 1 - CtxMax]struct{}

// Where the entry stub saved the argument registers (E_RDI ... in
// probe.S): a condition on an argument is read there.
const (
	ER9  = 16
	ER8  = 24
	ERDI = 32
	ERSI = 40
	ERDX = 48
	ERCX = 56
)

//go:embed probe.bin
var code []byte

// Len is the size of the stub code: one copy per out-of-line area.
func Len() int { return len(code) }

// Copy is the stub code for a copy whose data block is at data, and whose
// Via goes to viaCall: the ViaCall of the copy whose return stub is in use.
func Copy(data, viaCall uint64) []byte {
	c := append([]byte(nil), code...)
	binary.LittleEndian.PutUint64(c[DataPtr:], data)
	binary.LittleEndian.PutUint64(c[ViaPtr:], viaCall)
	return c
}

// IsCopy tells whether b starts with a copy of the stub code (of any data
// block's): how a later attach finds a killed profiler's stubs.
func IsCopy(b []byte) bool {
	return len(b) >= DataPtr && bytes.Equal(b[:DataPtr], code[:DataPtr])
}

// IsExitStub tells whether b starts as the exit probe's stub (ExitSite)
// or the tail jump's (TailSite) does.
func IsExitStub(b []byte) bool {
	return bytes.HasPrefix(code[ExitSite:], b) || bytes.HasPrefix(code[TailSite:], b)
}

// Inst is the instruction of the stub code at offset off, in Intel
// syntax, "" if none starts there: what a CPU sample there was running.
func Inst(off int) string {
	if off < 0 || off >= DataPtr {
		return ""
	}
	inst, err := x86asm.Decode(code[off:], 64)
	if err != nil || inst.Op == 0 {
		return ""
	}
	return x86asm.IntelSyntax(inst, uint64(off), nil)
}
