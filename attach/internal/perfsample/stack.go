package perfsample

import "encoding/binary"

// UserRegs are the user-mode registers a sample carries with its stack
// (Open with stackBytes): what an unwinder starts from. For a sample taken
// in the kernel they are the thread's user registers at its entry there.
type UserRegs struct{ BX, BP, SP, IP, R12, R13, R14, R15 uint64 }

// regsMask asks for UserRegs' registers, in the kernel's order (perf_regs
// of x86: bx 1, bp 6, sp 7, ip 8, r12-r15 20-23), which is the order they
// come in: by index.
const regsMask = 1<<1 | 1<<6 | 1<<7 | 1<<8 | 1<<20 | 1<<21 | 1<<22 | 1<<23

const nRegs = 8

// decodeStack reads the PERF_SAMPLE_REGS_USER and PERF_SAMPLE_STACK_USER
// parts of a sample record at b (after its IP and TIME): the registers and
// the stack's bytes from SP up, if the thread had user registers.
func decodeStack(b []byte) (regs UserRegs, stack []byte, ok bool) {
	if len(b) < 8 {
		return regs, nil, false
	}
	abi := binary.LittleEndian.Uint64(b)
	b = b[8:]
	if abi == 0 { // no user registers: a kernel thread
		return regs, nil, false
	}
	if len(b) < nRegs*8 {
		return regs, nil, false
	}
	r := [nRegs]uint64{}
	for i := range r {
		r[i] = binary.LittleEndian.Uint64(b[8*i:])
	}
	regs = UserRegs{BX: r[0], BP: r[1], SP: r[2], IP: r[3], R12: r[4], R13: r[5], R14: r[6], R15: r[7]}
	b = b[nRegs*8:]
	if len(b) < 8 {
		return regs, nil, true
	}
	size := binary.LittleEndian.Uint64(b)
	b = b[8:]
	if size == 0 || uint64(len(b)) < size+8 {
		return regs, nil, true
	}
	dyn := binary.LittleEndian.Uint64(b[size:])
	return regs, b[:min(size, dyn)], true
}
