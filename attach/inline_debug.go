package attach

import (
	"encoding/binary"
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/profile-dev/profile/attach/internal/ptrace"
	"github.com/profile-dev/profile/attach/internal/stub"
)

// debugLost prints a thread's shadow stack and the top of its stack
// (PROFILE_DEBUG): what a return stub that found no entry saw.
func (e *engine) debugLost(t *thread) {
	is := t.proc.as.inl
	if is == nil {
		return
	}
	var regs unix.PtraceRegs
	ptrace.GetRegs(t.tid, &regs)
	slot := is.TidSlot[t.tid]
	state := is.State(slot)
	hdr := make([]byte, 64)
	ptrace.ReadMem(t.tid, state, hdr)
	depth := binary.LittleEndian.Uint64(hdr[8:])
	fmt.Fprintf(os.Stderr, "LOST tid %d rip %#x (retstub %#x) rsp %#x rdx(S) %#x depth %d lo %#x hi %#x\n", t.tid, regs.Rip, is.RetStub, regs.Rsp, regs.Rdx, depth,
		binary.LittleEndian.Uint64(hdr[16:]), binary.LittleEndian.Uint64(hdr[24:]))
	sh := make([]byte, 16*(depth+4))
	ptrace.ReadMem(t.tid, state+stub.TShadow, sh)
	for i := 0; i < int(depth)+4; i++ {
		fmt.Fprintf(os.Stderr, "  [%d] slot %#x orig %#x %s\n", i, binary.LittleEndian.Uint64(sh[16*i:]), binary.LittleEndian.Uint64(sh[16*i+8:]), e.symbolize(t.proc.as, binary.LittleEndian.Uint64(sh[16*i+8:])))
	}
	st := make([]byte, 256)
	ptrace.ReadMem(t.tid, regs.Rsp, st)
	for i := 0; i < 32; i++ {
		fmt.Fprintf(os.Stderr, "  rsp+%#x: %#x %s\n", i*8, binary.LittleEndian.Uint64(st[8*i:]), e.symbolize(t.proc.as, binary.LittleEndian.Uint64(st[8*i:])))
	}
}
