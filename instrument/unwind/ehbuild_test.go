package unwind

import "encoding/binary"

// ehBuilder assembles .eh_frame data linked at addr for tests.
type ehBuilder struct {
	addr uint64
	long bool // write 64-bit lengths
	b    []byte
}

func uleb(v uint64) []byte {
	var out []byte
	for {
		b := byte(v & 0x7f)
		v >>= 7
		if v != 0 {
			out = append(out, b|0x80)
			continue
		}
		return append(out, b)
	}
}

func sleb(v int64) []byte {
	var out []byte
	for {
		b := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && b&0x40 == 0) || (v == -1 && b&0x40 != 0) {
			return append(out, b)
		}
		out = append(out, b|0x80)
	}
}

func cat(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// entry appends a length-prefixed entry (64-bit length when e.long) whose
// body starts with the 4-byte id, and returns its offset. body gets the
// link-time address where it will start, after the id.
func (e *ehBuilder) entry(id func(idOff int) uint32, body func(at uint64) []byte) int {
	off := len(e.b)
	hdr := 4
	if e.long {
		hdr = 12
	}
	idOff := off + hdr
	bb := body(e.addr + uint64(idOff+4))
	n := 4 + len(bb)
	for n%8 != 0 { // pad with DW_CFA_nop, as linkers do
		bb = append(bb, cfaNop)
		n++
	}
	if e.long {
		e.b = binary.LittleEndian.AppendUint32(e.b, 0xffffffff)
		e.b = binary.LittleEndian.AppendUint64(e.b, uint64(n))
	} else {
		e.b = binary.LittleEndian.AppendUint32(e.b, uint32(n))
	}
	e.b = binary.LittleEndian.AppendUint32(e.b, id(idOff))
	e.b = append(e.b, bb...)
	return off
}

// cie appends a CIE with code alignment 1, data alignment -8 and return
// address column 16. augData is the augmentation data (with its length
// prefixed when aug starts with 'z').
func (e *ehBuilder) cie(version byte, aug string, augData, ins []byte) int {
	return e.entry(func(int) uint32 { return 0 }, func(uint64) []byte {
		ra := []byte{16}
		if version != 1 {
			ra = uleb(16)
		}
		var ad []byte
		if len(aug) > 0 && aug[0] == 'z' {
			ad = cat(uleb(uint64(len(augData))), augData)
		}
		return cat([]byte{version}, []byte(aug), []byte{0}, uleb(1), sleb(-8), ra, ad, ins)
	})
}

// fde appends an FDE of CIE cieOff covering [lo, lo+n), pc_begin and
// pc_range stored with encoding enc (absptr, udata4, sdata4, udata8, maybe
// pcrel). augData is nil when the CIE has no 'z'.
func (e *ehBuilder) fde(cieOff int, enc byte, lo, n uint64, augData, ins []byte) int {
	return e.entry(func(idOff int) uint32 { return uint32(idOff - cieOff) }, func(at uint64) []byte {
		v := lo
		if enc&peApplyMask == pePcrel {
			v -= at
		}
		var ad []byte
		if augData != nil {
			ad = cat(uleb(uint64(len(augData))), augData)
		}
		return cat(encode(enc, v), encode(enc&peFormatMask, n), ad, ins)
	})
}

func encode(enc byte, v uint64) []byte {
	switch enc & peFormatMask {
	case peUdata4, peSdata4:
		return binary.LittleEndian.AppendUint32(nil, uint32(v))
	case peUdata2, peSdata2:
		return binary.LittleEndian.AppendUint16(nil, uint16(v))
	}
	return binary.LittleEndian.AppendUint64(nil, v)
}

// end appends the zero terminator.
func (e *ehBuilder) end() []byte { return append(e.b, 0, 0, 0, 0) }

// x86Initial are the usual x86-64 CIE initial instructions: CFA = rsp+8,
// RA at CFA-8.
func x86Initial() []byte { return []byte{cfaDefCFA, regRSP, 8, cfaOffset | regRIP, 1} }
