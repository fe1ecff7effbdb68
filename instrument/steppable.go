package instrument

import "golang.org/x/arch/x86/x86asm"

// Steppable tells whether a tracer may single-step the whole instructions
// of code (a function's first bytes) with no effect but their own: none
// enters the kernel or traps (a system call's stop would be taken for the
// step's, a trap's signal swallowed), and each decodes.
func Steppable(code []byte) bool {
	for len(code) > 0 {
		in, err := decodeInst(code)
		if err != nil {
			return false
		}
		switch in.Op {
		case x86asm.SYSCALL, x86asm.SYSENTER, x86asm.INT, x86asm.INTO, x86asm.UD2, x86asm.UD1, x86asm.HLT:
			return false
		}
		code = code[in.Len:]
	}
	return true
}
