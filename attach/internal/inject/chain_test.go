package inject

import (
	"strings"
	"testing"

	"golang.org/x/arch/x86/x86asm"
	"golang.org/x/sys/unix"
)

// The chain pops what chainValues lists, in its order, and its jump reads
// the resume address at chainResume: the code and the Go side are written
// apart.
func TestChainPopsWhatItIsGiven(t *testing.T) {
	var r unix.PtraceRegs
	names := map[*uint64]string{&r.Rax: "RAX", &r.Rcx: "RCX", &r.Rdx: "RDX", &r.Rbx: "RBX", &r.Rbp: "RBP",
		&r.Rsi: "RSI", &r.Rdi: "RDI", &r.R8: "R8", &r.R9: "R9", &r.R10: "R10", &r.R11: "R11", &r.R12: "R12",
		&r.R13: "R13", &r.R14: "R14", &r.R15: "R15", &r.Eflags: "FLAGS", &r.Rsp: "RSP"}
	i := uint64(1)
	want := map[uint64]string{}
	for p, n := range names {
		*p = i
		want[i] = n
		i++
	}
	var popped []string
	code := chainCode[:]
	off := 0
	for off < chainResume {
		in, err := x86asm.Decode(code[off:], 64)
		if err != nil {
			t.Fatalf("at %d: %v", off, err)
		}
		switch in.Op {
		case x86asm.POP:
			popped = append(popped, in.Args[0].String())
		case x86asm.POPFQ:
			popped = append(popped, "FLAGS")
		case x86asm.JMP:
			m, ok := in.Args[0].(x86asm.Mem)
			if !ok || m.Base != x86asm.RIP || off+in.Len+int(m.Disp) != chainResume {
				t.Errorf("the jump at %d does not read the resume address at %d: %v", off, chainResume, in)
			}
		}
		off += in.Len
	}
	vals := chainValues(r)
	if len(vals) != len(popped) || len(vals)*8 != chainBlock {
		t.Fatalf("chain pops %d registers (%s), chainValues gives %d, chainBlock is %d bytes", len(popped), strings.Join(popped, " "), len(vals), chainBlock)
	}
	for k, v := range vals {
		if want[v] != popped[k] {
			t.Errorf("pop %d: the chain pops %s, chainValues puts %s there", k, popped[k], want[v])
		}
	}
	if off != chainResume || ChainSize != chainResume+8 {
		t.Errorf("code ends at %d, resume address at %d, size %d", off, chainResume, ChainSize)
	}
}
