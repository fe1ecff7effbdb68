package heal

import "github.com/profile-dev/profile/attach/internal/ptrace"

// Rewrite lists the old bytes of a rewrite of the bytes at addr in the
// table as one block of fresh entries, last byte first (the handler
// restores in table order: the guarding int3 on the first byte goes back
// last), written at once; prot gives each byte's page protection. It
// returns the block's first entry, or -1 if the table is full or cannot
// be written. Entries of breakpoints on those bytes are dropped first:
// once the rewrite is done they would give a byte of the old state back
// into the new one.
func (h *Area) Rewrite(tid int, addr uint64, old []byte, prot func(uint64) byte) int {
	if h.count+len(old) > Capacity {
		return -1
	}
	for k := range old {
		if i, ok := h.slots[addr+uint64(k)]; ok {
			h.kill(tid, i)
			delete(h.slots, addr+uint64(k))
		}
	}
	block := make([]byte, len(old)*entrySize)
	for k, b := range old {
		a := addr + uint64(k)
		putEntry(block[(len(old)-1-k)*entrySize:], Entry{Addr: a, Orig: b, Live: true, Tail: k > 0}, prot(a))
	}
	first := h.count
	if ptrace.WriteMem(tid, h.entry(first), block) != nil {
		return -1
	}
	if h.setCount(tid, first+len(old)) != nil {
		return -1
	}
	return first
}

// RewriteDone marks the n entries of a finished rewrite from first dead
// in one write: the handler must put back all of a rewrite's old bytes or
// none (a profiler killed while it marked them one by one left some live,
// and the handler, at a later trap, put two of a patched function's five
// bytes back: `push rbp; in eax, dx`, SIGSEGV at its next call).
func (h *Area) RewriteDone(tid int, first, n int) {
	if first < 0 {
		return
	}
	at := h.entry(first)
	block := make([]byte, n*entrySize)
	if ptrace.ReadMem(tid, at, block) != nil {
		return
	}
	for i := range n {
		block[i*entrySize+entryLive] = 0
	}
	ptrace.WriteMem(tid, at, block)
}
