package unwind

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// errUnsupportedCIE marks a CIE this package cannot interpret (an unknown
// version or augmentation); the FDEs that use it are left out.
var errUnsupportedCIE = errors.New("unsupported CIE")

// cie is a Common Information Entry: what the FDEs that point at it share.
type cie struct {
	codeAlign uint64
	dataAlign int64
	raReg     uint64 // the return-address column, 16 (rip) on x86-64
	fdeEnc    byte   // encoding of the FDEs' pc_begin (and format of pc_range)
	augData   bool   // 'z': FDEs carry an augmentation data block
	signal    bool   // 'S': the FDEs describe signal trampolines
	initial   []byte // initial instructions
	initAddr  uint64 // link-time address of initial[0]
}

// fde is a Frame Description Entry: the CFA program of the code in [lo, hi)
// (link-time addresses).
type fde struct {
	lo, hi  uint64
	cie     *cie
	ins     []byte // instructions
	insAddr uint64 // link-time address of ins[0], for pc-relative DW_CFA_set_loc
}

// ehFrame is the contents of a .eh_frame section linked at addr. The data
// may run past the section's end (when found through PT_GNU_EH_FRAME, only
// the end of its segment is known); each entry's length bounds it.
type ehFrame struct {
	data []byte
	addr uint64
	cies map[int]*cie // by section offset
	bad  map[int]error
}

func newEHFrame(data []byte, addr uint64) *ehFrame {
	return &ehFrame{data: data, addr: addr, cies: make(map[int]*cie), bad: make(map[int]error)}
}

// entry is the framing of one CIE or FDE.
type entry struct {
	off   int    // offset of the entry's length field
	body  reader // positioned after the CIE id / CIE pointer field
	next  int    // offset of the following entry
	id    uint32 // 0 for a CIE, else the distance back to the FDE's CIE
	idOff int    // offset of the id field
}

// entryAt reads the header of the entry at off. A zero length is the
// terminator: it returns ok false.
func (e *ehFrame) entryAt(off int) (ent entry, ok bool, err error) {
	r := reader{b: e.data, off: off, addr: e.addr}
	length := uint64(r.u32())
	if length == 0xffffffff {
		length = r.u64()
	}
	if r.err != nil {
		return entry{}, false, fmt.Errorf("entry at %#x: %w", off, r.err)
	}
	if length == 0 {
		return entry{}, false, nil
	}
	if length > uint64(len(e.data)-r.off) || length < 4 {
		return entry{}, false, fmt.Errorf("entry at %#x: length %#x past the end of %#x bytes: %w", off, length, len(e.data), errShort)
	}
	end := r.off + int(length)
	ent.off = off
	ent.idOff = r.off
	ent.id = r.u32()
	ent.next = end
	ent.body = reader{b: e.data[:end], off: r.off, addr: e.addr}
	return ent, true, nil
}

// all parses every entry up to the terminator or the end of the data and
// returns the FDEs sorted by address. FDEs of unsupported CIEs and FDEs of
// empty ranges (left behind by discarded sections) are left out.
func (e *ehFrame) all() ([]fde, error) {
	var out []fde
	for off := 0; off < len(e.data); {
		ent, ok, err := e.entryAt(off)
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		if ent.id != 0 {
			f, ok, err := e.fde(ent)
			if err != nil {
				return nil, err
			}
			if ok {
				out = append(out, f)
			}
		}
		off = ent.next
	}
	sortFDEs(out)
	return out, nil
}

// fdeAt parses the FDE at offset off, for a .eh_frame_hdr table entry.
func (e *ehFrame) fdeAt(off int) (fde, bool, error) {
	ent, ok, err := e.entryAt(off)
	if err != nil {
		return fde{}, false, err
	}
	if !ok || ent.id == 0 {
		return fde{}, false, fmt.Errorf("entry at %#x is not an FDE", off)
	}
	return e.fde(ent)
}

func sortFDEs(fs []fde) {
	sort.Slice(fs, func(i, j int) bool { return fs[i].lo < fs[j].lo })
}

// fde parses an FDE body. ok is false when it is left out (see all).
func (e *ehFrame) fde(ent entry) (fde, bool, error) {
	cieOff := ent.idOff - int(ent.id)
	c, err := e.cieAt(cieOff)
	if errors.Is(err, errUnsupportedCIE) {
		return fde{}, false, nil
	}
	if err != nil {
		return fde{}, false, fmt.Errorf("FDE at %#x: %w", ent.off, err)
	}
	r := ent.body
	if c.fdeEnc&peIndirect != 0 {
		return fde{}, false, fmt.Errorf("FDE at %#x: indirect pc_begin encoding %#x", ent.off, c.fdeEnc)
	}
	lo := r.pointer(c.fdeEnc, bases{})
	n := r.value(c.fdeEnc & peFormatMask)
	if c.augData {
		r.block()
	}
	if r.err != nil {
		return fde{}, false, fmt.Errorf("FDE at %#x: %w", ent.off, r.err)
	}
	if n == 0 || lo == 0 || lo+n < lo {
		return fde{}, false, nil
	}
	return fde{lo: lo, hi: lo + n, cie: c, ins: r.b[r.off:], insAddr: r.pos()}, true, nil
}

// cieAt parses (once) the CIE at offset off.
func (e *ehFrame) cieAt(off int) (*cie, error) {
	if c, ok := e.cies[off]; ok {
		return c, nil
	}
	if err, ok := e.bad[off]; ok {
		return nil, err
	}
	c, err := e.parseCIE(off)
	if err != nil {
		err = fmt.Errorf("CIE at %#x: %w", off, err)
		e.bad[off] = err
		return nil, err
	}
	e.cies[off] = c
	return c, nil
}

func (e *ehFrame) parseCIE(off int) (*cie, error) {
	if off < 0 || off >= len(e.data) {
		return nil, fmt.Errorf("offset outside .eh_frame: %w", errShort)
	}
	ent, ok, err := e.entryAt(off)
	if err != nil {
		return nil, err
	}
	if !ok || ent.id != 0 {
		return nil, errors.New("not a CIE")
	}
	r := ent.body
	version := r.u8()
	aug := r.cstring()
	if r.err != nil {
		return nil, r.err
	}
	if version != 1 && version != 3 && version != 4 {
		return nil, fmt.Errorf("%w: version %d", errUnsupportedCIE, version)
	}
	if strings.HasPrefix(aug, "eh") { // pre-"z" GCC: a pointer to exception data
		r.u64()
		aug = aug[2:]
	}
	if version == 4 {
		if addrSize := r.u8(); addrSize != 8 && r.err == nil {
			return nil, fmt.Errorf("%w: address size %d", errUnsupportedCIE, addrSize)
		}
		r.u8() // segment selector size
	}
	c := &cie{codeAlign: r.uleb(), dataAlign: r.sleb(), fdeEnc: peAbsptr}
	if version == 1 {
		c.raReg = uint64(r.u8())
	} else {
		c.raReg = r.uleb()
	}
	if err := c.augmentation(&r, aug); err != nil {
		return nil, err
	}
	if r.err != nil {
		return nil, r.err
	}
	if c.raReg >= numRegs {
		return nil, fmt.Errorf("%w: return address column %d", errUnsupportedCIE, c.raReg)
	}
	c.initial, c.initAddr = r.b[r.off:], r.pos()
	return c, nil
}

// augmentation interprets the augmentation string and, with 'z', its data.
// After an unknown letter the rest of the data is skipped when its length is
// known ('z'); without 'z' only data-less letters are understood.
func (c *cie) augmentation(r *reader, aug string) error {
	if !strings.HasPrefix(aug, "z") {
		for _, l := range aug {
			if l != 'S' {
				return fmt.Errorf("%w: augmentation %q", errUnsupportedCIE, aug)
			}
			c.signal = true
		}
		return nil
	}
	c.augData = true
	data := r.block()
	if r.err != nil {
		return r.err
	}
	ar := reader{b: data, addr: r.pos() - uint64(len(data))}
	for _, l := range aug[1:] {
		switch l {
		case 'R':
			c.fdeEnc = ar.u8()
		case 'L':
			ar.u8() // LSDA encoding: the LSDA itself is in the FDE's data, skipped
		case 'P':
			ar.skipPointer(ar.u8()) // personality routine, not needed
		case 'S':
			c.signal = true
		case 'B', 'G': // AArch64 pointer authentication / MTE: no data
		default:
			return nil
		}
	}
	if ar.err != nil {
		return fmt.Errorf("augmentation %q data: %w", aug, ar.err)
	}
	return nil
}
