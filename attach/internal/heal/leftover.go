package heal

import (
	"bytes"
	"encoding/binary"

	"github.com/profile-dev/profile/attach/internal/ptrace"
)

// What a killed profiler's heal area tells a later attach, read through
// stopped thread tid.

// HeadSize is how many of an area's first bytes IsHandler looks at.
const HeadSize = restore

// IsHandler tells whether head, an area's first HeadSize bytes, is our
// handler's code.
func IsHandler(head []byte) bool { return bytes.Equal(head, code[:restore]) }

// At tells whether the memory at base starts with our handler's code.
func At(tid int, base uint64) bool {
	head := make([]byte, HeadSize)
	return base >= 2 && ptrace.ReadMem(tid, base, head) == nil && IsHandler(head)
}

// OldOf is the disposition the handler at base chains to: the program's
// own, or a killed profiler's before it.
func OldOf(tid int, base uint64) (SigAction, bool) {
	a, err := ReadAct(tid, OldAct(base))
	return a, err == nil
}

// Entry is one entry of a heal table: a byte the tracer changed and what
// it was; dead entries were taken back by the tracer. A rewrite's bytes
// past its first are Tail entries, listed just before its first's.
type Entry struct {
	Addr uint64
	Orig byte
	Live bool
	Tail bool
}

// Entries reads the table of the heal area at base.
func Entries(tid int, base uint64) []Entry {
	ents, _ := readTable(traceeMem(tid), base)
	return ents
}

// traceeMem reads a stopped tracee's memory as an io.ReaderAt.
type traceeMem int

func (tid traceeMem) ReadAt(p []byte, off int64) (int, error) {
	if err := ptrace.ReadMem(int(tid), uint64(off), p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Listed is the out-of-line areas the heal area at base lists, [lo, hi)
// each.
func Listed(tid int, base uint64) [][2]uint64 {
	var cnt [8]byte
	if ptrace.ReadMem(tid, base+areaCount, cnt[:]) != nil {
		return nil
	}
	n := min(binary.LittleEndian.Uint64(cnt[:]), MaxAreas)
	tab := make([]byte, 16*n)
	if n == 0 || ptrace.ReadMem(tid, base+areasAt, tab) != nil {
		return nil
	}
	out := make([][2]uint64, n)
	for i := range out {
		out[i] = [2]uint64{binary.LittleEndian.Uint64(tab[16*i:]), binary.LittleEndian.Uint64(tab[16*i+8:])}
	}
	return out
}
