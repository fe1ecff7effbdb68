package stub

import "golang.org/x/arch/x86/x86asm"

// eventClocks holds the offsets of the stub code right behind each clock
// read (rdtsc) whose tick an event records, as EVENT of probe.S writes
// it: `shl rdx, 32; or rax, rdx; mov [r9 + 8], rax` follow. A CPU sample
// lands there for the time the read waited. The full ring's waits read
// the clock too; those ticks are not an event's. Decoded from the code's
// two runs of instructions (before and from Via, the `.org` between them
// padding).
var eventClocks = func() map[int]bool {
	m := map[int]bool{}
	for _, run := range [][2]int{{Entry, Via}, {Via, DataPtr}} {
		var insts []x86asm.Inst
		var offs []int
		for off := run[0]; off < run[1]; {
			inst, err := x86asm.Decode(code[off:run[1]], 64)
			if err != nil || inst.Len == 0 {
				off++ // the padding before Via
				continue
			}
			insts, offs = append(insts, inst), append(offs, off)
			off += inst.Len
		}
		for i := 0; i+3 < len(insts); i++ {
			if insts[i].Op == x86asm.RDTSC && storesTick(insts[i+3]) {
				m[offs[i+1]] = true
			}
		}
	}
	return m
}()

// storesTick tells whether inst is `mov [r9 + 8], rax`: the tick into its
// event's slot.
func storesTick(inst x86asm.Inst) bool {
	m, ok := inst.Args[0].(x86asm.Mem)
	return inst.Op == x86asm.MOV && ok && m.Base == x86asm.R9 && m.Disp == 8 && m.Index == 0 && inst.Args[1] == x86asm.RAX
}

// AfterEventClock tells whether offset off of the stub code is the
// instruction right behind an event's clock read.
func AfterEventClock(off int) bool { return eventClocks[off] }
