package instrument

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"

	"golang.org/x/arch/x86/x86asm"
)

// x86-64 dynamic relocation types that fill GOT slots with function (or
// object) addresses.
const (
	rGlobDat   = 6  // R_X86_64_GLOB_DAT: .got, used by .plt.got and -fno-plt
	rJumpSlot  = 7  // R_X86_64_JUMP_SLOT: .got.plt, used by .plt/.plt.sec
	rIRelative = 37 // R_X86_64_IRELATIVE: slot filled by an IFUNC resolver
	relaSize   = 24
)

// pltSections are the sections holding PLT stubs. .plt.sec exists when the
// file was linked for IBT: the stubs called are then in .plt.sec and .plt
// only holds the lazy-binding trampolines.
var pltSections = []string{".plt", ".plt.sec", ".plt.got"}

// readPLT fills m.GOT from the dynamic relocations and m.PLT by decoding each
// PLT stub to find the GOT slot it jumps through. Decoding rather than
// relying on "stub i belongs to relocation i" works for every layout (GNU ld
// with and without IBT, .plt.got, lld) without knowing which one it is.
func (m *Module) readPLT(f *elf.File, ifuncs map[uint64]string) error {
	dyn, err := f.DynamicSymbols()
	if err != nil && !errors.Is(err, elf.ErrNoSymbols) {
		return fmt.Errorf("read .dynsym: %w", err)
	}
	m.GOT = make(map[uint64]string)
	m.PLT = make(map[uint64]string)
	m.pltSlots = make(map[uint64]uint64)
	m.IFuncSlots = make(map[uint64]string)
	var jmprel []string // .rela.plt names in order, for "push index" trampolines
	for _, s := range f.Sections {
		if s.Type != elf.SHT_RELA {
			continue
		}
		data, err := s.Data()
		if err != nil {
			return fmt.Errorf("read %s: %w", s.Name, err)
		}
		for off := 0; off+relaSize <= len(data); off += relaSize {
			slot := binary.LittleEndian.Uint64(data[off:])
			info := binary.LittleEndian.Uint64(data[off+8:])
			addend := binary.LittleEndian.Uint64(data[off+16:])
			name := ""
			switch typ, sym := uint32(info), info>>32; typ {
			case rGlobDat, rJumpSlot:
				if sym >= 1 && sym <= uint64(len(dyn)) {
					name = dyn[sym-1].Name
				}
			case rIRelative:
				name = ifuncs[addend]
				if name != "" {
					m.IFuncSlots[slot] = name
				}
			}
			if name != "" {
				m.GOT[slot] = name
			}
			if s.Name == ".rela.plt" {
				jmprel = append(jmprel, name)
			}
		}
	}
	for _, name := range []string{".got", ".got.plt"} {
		if s := f.Section(name); s != nil && s.Type == elf.SHT_PROGBITS {
			m.got = append(m.got, addrRange{s.Addr, s.Addr + s.Size})
		}
	}
	for _, name := range pltSections {
		s := f.Section(name)
		if s == nil || s.Type != elf.SHT_PROGBITS || s.Size == 0 {
			continue
		}
		m.plt = append(m.plt, addrRange{s.Addr, s.Addr + s.Size})
		data, err := s.Data()
		if err != nil {
			return fmt.Errorf("read %s: %w", name, err)
		}
		entry := s.Entsize
		if entry == 0 || uint64(len(data))%entry != 0 {
			entry = 16
		}
		for off := uint64(0); off+entry <= uint64(len(data)); off += entry {
			target, slot := stubTarget(data[off:off+entry], s.Addr+off, m.GOT, jmprel)
			if target != "" {
				m.PLT[s.Addr+off] = target
			}
			if slot != 0 {
				m.pltSlots[s.Addr+off] = slot
			}
		}
	}
	return nil
}

// stubTarget names the function a PLT stub at link-time address pc jumps to
// and the GOT slot it jumps through (0 if none): the slot of its "jmp
// [rip+slot]", or, for a lazy-binding trampoline ("push index; jmp
// .plt0"), the index-th .rela.plt entry's name.
func stubTarget(stub []byte, pc uint64, got map[uint64]string, jmprel []string) (string, uint64) {
	pushed := ""
	for off := 0; off < len(stub); {
		inst, err := decodeInst(stub[off:])
		if err != nil {
			return "", 0
		}
		next := pc + uint64(off+inst.Len)
		switch inst.Op {
		case x86asm.JMP:
			if _, ok := ripMem(inst); ok {
				slot := next + uint64(pcRel(stub[off:], inst))
				return got[slot], slot
			}
			return pushed, 0
		case x86asm.PUSH:
			if imm, ok := inst.Args[0].(x86asm.Imm); ok && imm >= 0 && int64(imm) < int64(len(jmprel)) {
				pushed = jmprel[imm]
			}
		}
		off += inst.Len
	}
	return "", 0
}

// PLTSlot is the link-time address of the GOT slot the PLT stub at
// link-time address stub jumps through: read in a running process, it
// holds where a call through the stub goes.
func (m *Module) PLTSlot(stub uint64) (uint64, bool) {
	slot, ok := m.pltSlots[stub]
	return slot, ok
}
