package heal

import (
	_ "embed"
	"encoding/binary"
)

//go:embed heal.bin
var code []byte

// Offsets in the heal area, mirrored from healcode/heal.S (checked by
// TestLayoutMatchesAssembly).
const (
	Size         = 8 << 20 // MAP_NORESERVE: pages are touched as the table grows
	restore      = 0x700
	restorer     = 0x7f0
	count        = 0x808
	oldAct       = 0x810
	newAct       = 0x830
	injectTrap   = 0x870
	injectValid  = 0x878
	injectRegs   = 0x880
	areaCount    = 0x910
	areasAt      = 0x918
	MaxAreas     = 14
	inUse        = 0x9f8
	parkHandler  = 0x500
	parkOldAct   = 0xa00
	parkNewAct   = 0xa20
	parkCookie   = 0xa40
	parkDeadline = 0xa48
	parkSlots    = 0xa80
	parkSlotSize = 32
	// ParkSlots is how many threads not ours the handler parks at once.
	ParkSlots = 32
	table     = 0x1000
	entrySize = 16
	Capacity  = (Size - table) / entrySize
	entryLive = 10 // offset of an entry's live flag
	// entryTail flags an entry of a rewrite's byte past its first: not a
	// guard of its own, whatever byte is there now (the handler does not
	// read it; a later attach does, undoHealTable).
	entryTail = 11

	// magic in si_errno marks a thread the tracer moved on before
	// resuming it: si_addr holds the rip it set (Mark).
	magic = 0x464f5250
)

// Code is the heal area's first bytes, the handler's code, for an area
// whose engine injects system calls at site (a thread whose trap the
// tracer reaped before dying goes on from site's int3 to the restore
// stub).
func Code(site uint64) []byte {
	c := append([]byte(nil), code...)
	binary.LittleEndian.PutUint64(c[injectTrap:], site+2)
	return c
}

// RestoreStub is the address of the restore stub in the heal area at
// base: where a thread past an injection site's int3 jumps.
func RestoreStub(base uint64) uint64 { return base + restore }

// OldAct and NewAct are where the area at base keeps the program's own
// SIGTRAP disposition and ours (each a kernel struct sigaction).
func OldAct(base uint64) uint64 { return base + oldAct }
func NewAct(base uint64) uint64 { return base + newAct }

// Restorer is the area's signal return stub (sa_restorer).
func Restorer(base uint64) uint64 { return base + restorer }

// InUse is where the area at base counts the threads inside its handler:
// from its entry to its restorer's sigreturn, their stacks hold addresses
// in the area. With none inside, such an address on a stack is stale.
func InUse(base uint64) uint64 { return base + inUse }
