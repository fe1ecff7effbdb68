package attach

import (
	"encoding/binary"

	"github.com/profile-dev/profile/attach/internal/ptrace"
)

// healRewrite lists the old bytes of a rewrite of the bytes at addr in the
// heal table as one block of fresh entries, last byte first (the handler
// restores in table order: the guarding int3 on the first byte goes back
// last), written at once. It returns the block's first entry, or -1 if the
// table is full or cannot be written. Entries of breakpoints on those
// bytes are dropped first: once the rewrite is done they would give a
// byte of the old state back into the new one.
func (e *engine) healRewrite(tid int, as *space, addr uint64, old []byte) int {
	h := as.heal
	if h == nil || h.count+len(old) > healCapacity {
		return -1
	}
	for k := range old {
		if i, ok := h.slots[addr+uint64(k)]; ok {
			ptrace.WriteMem(tid, h.base+healTable+uint64(i)*healEntrySize+10, []byte{0})
			delete(h.slots, addr+uint64(k))
		}
	}
	block := make([]byte, len(old)*healEntrySize)
	for k, b := range old {
		a := addr + uint64(k)
		ent := block[(len(old)-1-k)*healEntrySize:]
		binary.LittleEndian.PutUint64(ent, a)
		ent[8], ent[9], ent[10] = b, as.protAt(tid, a), 1
	}
	first := h.count
	if ptrace.WriteMem(tid, h.base+healTable+uint64(first)*healEntrySize, block) != nil {
		return -1
	}
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(first+len(old)))
	if ptrace.WriteMem(tid, h.base+healCount, n[:]) != nil {
		return -1
	}
	h.count = first + len(old)
	return first
}

// healRewriteDone marks the n entries of a finished rewrite from first
// dead in one write: the handler must put back all of a rewrite's old
// bytes or none (a profiler killed while it marked them one by one left
// some live, and the handler, at a later trap, put two of a patched
// function's five bytes back: `push rbp; in eax, dx`, SIGSEGV at its next
// call).
func (e *engine) healRewriteDone(tid int, as *space, first, n int) {
	h := as.heal
	if h == nil || first < 0 {
		return
	}
	at := h.base + healTable + uint64(first)*healEntrySize
	block := make([]byte, n*healEntrySize)
	if ptrace.ReadMem(tid, at, block) != nil {
		return
	}
	for i := range n {
		block[i*healEntrySize+10] = 0
	}
	ptrace.WriteMem(tid, at, block)
}
