package instrument

import (
	"debug/elf"
	"fmt"
	"path/filepath"
)

// pageSize is the x86-64 base page size; mmap offsets are multiples of it.
const pageSize = 4096

// Bias returns the load bias of m in the process whose mappings are maps:
// runtime address = link-time address + bias. It is 0 for ET_EXEC files.
//
// A mapping maps file offset o to Start + (o - Offset), and a PT_LOAD segment
// gives offset o the link-time address p_vaddr + (o - p_offset), so
//
//	bias = Start - Offset + p_offset - p_vaddr
//
// for any mapping and segment that overlap in file offsets. The executable
// segment is matched with the executable mapping first because that is what
// the bias is used for and because older layouts map the same file page in
// two segments (the end of text and the start of data).
func (m *Module) Bias(maps []Mapping) (uint64, error) {
	if !m.PIE {
		return 0, nil
	}
	var mine []Mapping
	for _, mp := range maps {
		if m.isFile(mp) {
			mine = append(mine, mp)
		}
	}
	if len(mine) == 0 {
		return 0, fmt.Errorf("bias of %s: not mapped", m.Path)
	}
	for _, wantExec := range []bool{true, false} {
		for _, seg := range m.loads {
			if (seg.flags&elf.PF_X != 0) != wantExec || seg.filesz == 0 {
				continue
			}
			for _, mp := range mine {
				if mp.Exec() != wantExec || !overlaps(mp, seg) {
					continue
				}
				bias := mp.Start - mp.Offset + seg.off - seg.vaddr
				if bias%pageSize != 0 {
					return 0, fmt.Errorf("bias of %s: %#x from mapping %#x-%#x is not page aligned", m.Path, bias, mp.Start, mp.End)
				}
				return bias, nil
			}
		}
	}
	return 0, fmt.Errorf("bias of %s: no mapping covers a PT_LOAD segment", m.Path)
}

// overlaps reports whether mapping mp maps part of segment seg's file bytes.
func overlaps(mp Mapping, seg segment) bool {
	mapEnd := mp.Offset + (mp.End - mp.Start)
	return mp.Offset < seg.off+seg.filesz && seg.off < mapEnd
}

// isFile reports whether mapping mp is of m's file. The kernel names files by
// their resolved path (/usr/lib/... on merged-/usr systems while the user
// may have opened /lib/...), so the resolved path and the inode count too.
func (m *Module) isFile(mp Mapping) bool {
	if !mp.FileBacked() {
		return false
	}
	if mp.Path == m.Path || (m.real != "" && mp.Path == m.real) {
		return true
	}
	return m.ino != 0 && mp.Inode == m.ino && filepath.Base(mp.Path) == filepath.Base(m.real)
}
