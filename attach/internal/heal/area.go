package heal

import (
	"encoding/binary"

	"golang.org/x/sys/unix"

	"github.com/profile-dev/profile/attach/internal/ptrace"
)

// Area is the tracer's side of one address space's heal area: every write
// goes to the target (through a stopped thread tid) before the Go side
// counts it.
type Area struct {
	Base  uint64
	Old   SigAction      // the program's own SIGTRAP disposition
	count int            // table entries written
	slots map[uint64]int // breakpoint address -> table entry
	areas [][2]uint64    // out-of-line areas the handler knows
	full  int            // breakpoints that found the table full
}

// New is the Go side of a heal area written at base.
func New(base uint64) *Area { return &Area{Base: base, slots: map[uint64]int{}} }

// Clone is h for a forked child's copy of the area.
func (h *Area) Clone() *Area {
	if h == nil {
		return nil
	}
	c := *h
	c.areas = append([][2]uint64(nil), h.areas...)
	c.slots = make(map[uint64]int, len(h.slots))
	for k, v := range h.slots {
		c.slots[k] = v
	}
	return &c
}

// Add records a breakpoint's original byte (and its page's protection)
// in the table before its int3 is written, so the handler can always undo
// it. full is true for the first breakpoint the table has no room for
// (the caller says so once).
func (h *Area) Add(tid int, addr uint64, orig, prot byte) (full bool) {
	if i, ok := h.slots[addr]; ok {
		h.write(tid, i, addr, orig, prot)
		return false
	}
	if h.count >= Capacity {
		h.full++
		return h.full == 1
	}
	i := h.count
	if h.write(tid, i, addr, orig, prot) != nil {
		return false
	}
	if h.setCount(tid, i+1) == nil {
		h.slots[addr] = i
	}
	return false
}

func (h *Area) write(tid int, i int, addr uint64, orig, prot byte) error {
	var ent [entrySize]byte
	putEntry(ent[:], Entry{Addr: addr, Orig: orig, Live: true}, prot)
	return ptrace.WriteMem(tid, h.entry(i), ent[:])
}

func (h *Area) entry(i int) uint64 { return h.Base + table + uint64(i)*entrySize }

func (h *Area) setCount(tid, n int) error {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(n))
	if err := ptrace.WriteMem(tid, h.Base+count, b[:]); err != nil {
		return err
	}
	h.count = n
	return nil
}

// kill marks entry i dead.
func (h *Area) kill(tid int, i int) {
	ptrace.WriteMem(tid, h.entry(i)+entryLive, []byte{0})
}

// Drop marks the entries in [lo, hi) dead: their module is unmapped, and
// writing to its old addresses could hit whatever is mapped there next.
func (h *Area) Drop(tid int, lo, hi uint64) {
	for addr, i := range h.slots {
		if addr >= lo && addr < hi {
			h.kill(tid, i)
			delete(h.slots, addr)
		}
	}
}

// List lists an out-of-line area [lo, hi) for the handler: a thread the
// tracer moved into one resumes there without a mark (Mark). It is false
// when the list is full or cannot be written.
func (h *Area) List(tid int, lo, hi uint64) bool {
	if len(h.areas) >= MaxAreas {
		return false
	}
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:], lo)
	binary.LittleEndian.PutUint64(b[8:], hi)
	if ptrace.WriteMem(tid, h.Base+areasAt+uint64(16*len(h.areas)), b[:]) != nil {
		return false
	}
	binary.LittleEndian.PutUint64(b[:], uint64(len(h.areas)+1))
	if ptrace.WriteMem(tid, h.Base+areaCount, b[:8]) != nil {
		return false
	}
	h.areas = append(h.areas, [2]uint64{lo, hi})
	return true
}

// Unlist takes the last area List listed off the list: it was not mapped
// after all.
func (h *Area) Unlist(tid int) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(len(h.areas)-1))
	if ptrace.WriteMem(tid, h.Base+areaCount, b[:]) == nil {
		h.areas = h.areas[:len(h.areas)-1]
	}
}

// Covers tells whether rip lies in an area the handler knows.
func (h *Area) Covers(rip uint64) bool {
	for _, a := range h.areas {
		if rip >= a[0] && rip < a[1] {
			return true
		}
	}
	return false
}

// Save puts the registers thread tid must resume with, should the tracer
// die during an injected system call, where the handler finds them.
func (h *Area) Save(tid int, r unix.PtraceRegs) {
	g := []uint64{r.R8, r.R9, r.R10, r.R11, r.R12, r.R13, r.R14, r.R15, r.Rdi, r.Rsi, r.Rbp, r.Rbx,
		r.Rdx, r.Rax, r.Rcx, r.Rsp, r.Rip, r.Eflags}
	buf := make([]byte, 8+8*len(g))
	binary.LittleEndian.PutUint64(buf, 1)
	for i, v := range g {
		binary.LittleEndian.PutUint64(buf[8+8*i:], v)
	}
	ptrace.WriteMem(tid, h.Base+injectValid, buf)
}

// Clear says the save block no longer holds a thread's registers.
func (h *Area) Clear(tid int) {
	ptrace.WriteMem(tid, h.Base+injectValid, make([]byte, 8))
}

// Mark marks the siginfo of thread tid, whose SIGTRAP stop is still
// pending, with the rip the tracer is about to give it: should the tracer
// die before resuming it, the handler sees the mark and resumes it there.
// Without the mark the handler rewinds it to its breakpoint.
func Mark(tid int, rip uint64) {
	si := ptrace.SigInfo{Signo: int32(unix.SIGTRAP), Errno: magic, Code: ptrace.SIKernel, Addr: rip}
	ptrace.SetSigInfo(tid, &si)
}
