package unwind

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
)

// ErrNoCFI is returned (wrapped) by Load when a file has no usable
// .eh_frame. The unwinder still walks such code by its frame pointers.
var ErrNoCFI = errors.New("no .eh_frame call frame information")

// Module is one mapped ELF object: the FDEs of its .eh_frame, sorted by the
// link-time range they cover, and where it lies in the process.
type Module struct {
	Path   string
	bias   uint64 // runtime = link-time + bias
	lo, hi uint64 // runtime range [lo, hi) whose pcs this module describes
	fdes   []fde
}

// Load parses the .eh_frame of the x86-64 ELF file at path. bias is its load
// bias (instrument.Module.Bias) and [lo, hi) the runtime addresses it covers
// (typically from the lowest to the highest of its mappings).
func Load(path string, bias, lo, hi uint64) (*Module, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load CFI: %w", err)
	}
	defer f.Close()
	m, err := LoadReader(f, bias, lo, hi)
	if err != nil {
		return nil, fmt.Errorf("load CFI of %s: %w", path, err)
	}
	m.Path = path
	return m, nil
}

// LoadReader is Load for an ELF image that is not a file by itself, such as
// the [vdso] copied out of the process.
func LoadReader(r io.ReaderAt, bias, lo, hi uint64) (*Module, error) {
	f, err := elf.NewFile(r)
	if err != nil {
		return nil, fmt.Errorf("read ELF: %w", err)
	}
	if f.Class != elf.ELFCLASS64 || f.Machine != elf.EM_X86_64 {
		return nil, fmt.Errorf("not an x86-64 ELF file (%v %v)", f.Class, f.Machine)
	}
	fdes, err := readFDEs(f)
	if err != nil {
		return nil, err
	}
	if len(fdes) == 0 {
		return nil, ErrNoCFI
	}
	return &Module{bias: bias, lo: lo, hi: hi, fdes: fdes}, nil
}

// LoadImage is LoadReader for an ELF image mapped whole from start to
// end, its first loadable segment at start: the [vdso], whose code
// (clock_gettime's system call, a time read) a thread is often found in.
func LoadImage(img []byte, start, end uint64) (*Module, error) {
	f, err := elf.NewFile(bytes.NewReader(img))
	if err != nil {
		return nil, fmt.Errorf("read ELF image: %w", err)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			return LoadReader(bytes.NewReader(img), start-(p.Vaddr-p.Off), start, end)
		}
	}
	return nil, errors.New("read ELF image: no loadable segment")
}

// Placed is m's call-frame information placed at bias, covering [lo,
// hi): another mapping of the same file. The FDEs, fixed at link time
// and never changed after Load, are shared.
func (m *Module) Placed(bias, lo, hi uint64) *Module {
	c := *m
	c.bias, c.lo, c.hi = bias, lo, hi
	return &c
}

// Contains reports whether the runtime address pc lies in the module.
func (m *Module) Contains(pc uint64) bool { return pc >= m.lo && pc < m.hi }

// Bias returns the module's load bias.
func (m *Module) Bias() uint64 { return m.bias }

// fdeFor returns the FDE covering the link-time address pc, or nil.
func (m *Module) fdeFor(pc uint64) *fde {
	i := sort.Search(len(m.fdes), func(i int) bool { return m.fdes[i].lo > pc }) - 1
	if i < 0 || pc >= m.fdes[i].hi {
		return nil
	}
	return &m.fdes[i]
}

// Range returns the link-time range [lo, hi) of the FDE covering the
// link-time address pc: the code one function, or one part of it, spans.
func (m *Module) Range(pc uint64) (lo, hi uint64, ok bool) {
	f := m.fdeFor(pc)
	if f == nil {
		return 0, 0, false
	}
	return f.lo, f.hi, true
}

// readFDEs parses .eh_frame, found by its section header or, in files whose
// section headers are gone, through the PT_GNU_EH_FRAME segment
// (.eh_frame_hdr), whose table then lists the FDEs.
func readFDEs(f *elf.File) ([]fde, error) {
	if s := f.Section(".eh_frame"); s != nil && s.Type != elf.SHT_NOBITS {
		data, err := s.Data()
		if err != nil {
			return nil, fmt.Errorf("read .eh_frame: %w", err)
		}
		fdes, err := newEHFrame(data, s.Addr).all()
		if err != nil {
			return nil, fmt.Errorf("parse .eh_frame: %w", err)
		}
		return fdes, nil
	}
	return fdesFromSegments(f)
}

// fdesFromSegments finds the FDEs through .eh_frame_hdr's table.
func fdesFromSegments(f *elf.File) ([]fde, error) {
	var hdr *elf.Prog
	for _, p := range f.Progs {
		if p.Type == elf.PT_GNU_EH_FRAME {
			hdr = p
		}
	}
	if hdr == nil {
		return nil, ErrNoCFI
	}
	data := make([]byte, hdr.Filesz)
	if _, err := hdr.ReadAt(data, 0); err != nil {
		return nil, fmt.Errorf("read PT_GNU_EH_FRAME: %w", err)
	}
	h, err := parseEHFrameHdr(data, hdr.Vaddr)
	if err != nil {
		return nil, err
	}
	if h.table == nil {
		return nil, fmt.Errorf(".eh_frame_hdr has no search table: %w", ErrNoCFI)
	}
	eh, err := segmentFrom(f, h.ehFrame)
	if err != nil {
		return nil, fmt.Errorf(".eh_frame at %#x: %w", h.ehFrame, err)
	}
	var out []fde
	for _, t := range h.table {
		if t.fde < h.ehFrame || t.fde-h.ehFrame >= uint64(len(eh.data)) {
			return nil, fmt.Errorf(".eh_frame_hdr: FDE address %#x outside .eh_frame", t.fde)
		}
		d, ok, err := eh.fdeAt(int(t.fde - h.ehFrame))
		if err != nil {
			return nil, fmt.Errorf("parse .eh_frame: %w", err)
		}
		if ok {
			out = append(out, d)
		}
	}
	sortFDEs(out)
	return out, nil
}

// segmentFrom returns the file bytes from the link-time address addr to the
// end of the PT_LOAD segment that holds it, as .eh_frame data.
func segmentFrom(f *elf.File, addr uint64) (*ehFrame, error) {
	for _, p := range f.Progs {
		if p.Type != elf.PT_LOAD || addr < p.Vaddr || addr-p.Vaddr >= p.Filesz {
			continue
		}
		data := make([]byte, p.Filesz-(addr-p.Vaddr))
		if _, err := p.ReadAt(data, int64(addr-p.Vaddr)); err != nil {
			return nil, fmt.Errorf("read segment: %w", err)
		}
		return newEHFrame(data, addr), nil
	}
	return nil, errors.New("not in a PT_LOAD segment")
}
