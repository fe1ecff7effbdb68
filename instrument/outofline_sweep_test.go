package instrument

import (
	"errors"
	"os"
	"testing"

	"golang.org/x/arch/x86/x86asm"
)

// TestPlanSweep plans every function entry and every return site (the
// instruction after a call) of real binaries, as the tracer will: each
// must either plan or be refused with ErrCannotPlan, and the only refusals
// expected are the traps compilers put after calls that do not return
// (hlt after __libc_start_main, ud2 after abort-like calls).
func TestPlanSweep(t *testing.T) {
	paths := map[string]string{
		"pie": buildC(t, "calls.c"),
		"ibt": buildC(t, "calls.c", "-fcf-protection", "-Wl,-z,ibtplt"),
	}
	if _, err := os.Stat(libcPath); err == nil {
		paths["libc"] = libcPath
	}
	for name, path := range paths {
		t.Run(name, func(t *testing.T) {
			m := openModule(t, path)
			const bias = 0x7f0000000000 // pretend load address; slot 1 GiB below
			slot := uint64(bias - 0x40000000)
			var sites, refused, traps int
			emus := map[Emu]int{}
			plan := func(addr uint64) {
				code, err := m.ReadAt(addr, 16)
				if err != nil {
					return // at the end of the segment
				}
				sites++
				p, err := PlanAt(code, addr+bias, slot)
				if err != nil {
					if !errors.Is(err, ErrCannotPlan) {
						t.Errorf("PlanAt(%#x): %v without ErrCannotPlan", addr, err)
					}
					if inst, derr := decodeInst(code); derr == nil && (inst.Op == x86asm.HLT || inst.Op == x86asm.UD2) {
						traps++
						return
					}
					refused++
					if refused < 5 {
						t.Logf("refused: %v", err)
					}
					return
				}
				emus[p.Emulate]++
				if len(p.OOL) > SlotSize {
					t.Errorf("%#x: OOL of %d bytes", addr, len(p.OOL))
				}
			}
			for _, s := range m.Symbols {
				plan(s.Value)
				code, err := m.Code(s)
				if err != nil || s.Size == 0 {
					continue
				}
				for off := 0; off < len(code); {
					inst, err := decodeInst(code[off:])
					if err != nil {
						break
					}
					off += inst.Len
					if inst.Op == x86asm.CALL && off < len(code) {
						plan(s.Value + uint64(off))
					}
				}
			}
			t.Logf("%d sites: %v, %d traps after noreturn calls, %d other refusals", sites, emus, traps, refused)
			if sites == 0 || refused > 0 {
				t.Errorf("%d of %d sites refused", refused, sites)
			}
		})
	}
}
