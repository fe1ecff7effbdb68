package unwind

import "fmt"

// Pointer encodings (DW_EH_PE_*, LSB Core "DWARF Extensions"): the low
// nibble is how the value is stored, bits 4-6 what it is relative to, bit 7
// that it is the address of the pointer rather than the pointer.
const (
	peAbsptr  = 0x00
	peUleb128 = 0x01
	peUdata2  = 0x02
	peUdata4  = 0x03
	peUdata8  = 0x04
	peSigned  = 0x08 // signed absptr
	peSleb128 = 0x09
	peSdata2  = 0x0a
	peSdata4  = 0x0b
	peSdata8  = 0x0c

	pePcrel   = 0x10
	peTextrel = 0x20
	peDatarel = 0x30
	peFuncrel = 0x40
	peAligned = 0x50

	peIndirect = 0x80
	peOmit     = 0xff

	peFormatMask = 0x0f
	peApplyMask  = 0x70
)

// bases are the addresses the relative pointer encodings other than pcrel
// are applied to. A zero-valued base is unknown and rejects its encoding.
type bases struct {
	data uint64 // datarel: the start of .eh_frame_hdr
}

// pointer reads a pointer stored with encoding enc. The indirect bit is
// ignored (the result is then the address of the pointer); callers that need
// the pointer itself reject it. peOmit reads nothing and returns 0.
func (r *reader) pointer(enc byte, b bases) uint64 {
	if enc == peOmit {
		return 0
	}
	at := r.pos()
	if enc&peApplyMask == peAligned {
		pad := (8 - at%8) % 8
		r.bytes(int(pad))
		return r.u64()
	}
	v := r.value(enc & peFormatMask)
	switch enc & peApplyMask {
	case peAbsptr:
	case pePcrel:
		v += at
	case peDatarel:
		if b.data == 0 {
			r.fail(fmt.Errorf("pointer encoding %#x: datarel without a data base", enc))
		}
		v += b.data
	default:
		r.fail(fmt.Errorf("pointer encoding %#x: unsupported application %#x", enc, enc&peApplyMask))
	}
	return v
}

// value reads a number stored in pointer format f, sign-extending the
// signed formats.
func (r *reader) value(f byte) uint64 {
	switch f {
	case peAbsptr, peUdata8, peSdata8, peSigned:
		return r.u64()
	case peUleb128:
		return r.uleb()
	case peSleb128:
		return uint64(r.sleb())
	case peUdata2:
		return uint64(r.u16())
	case peUdata4:
		return uint64(r.u32())
	case peSdata2:
		return uint64(int64(int16(r.u16())))
	case peSdata4:
		return uint64(int64(int32(r.u32())))
	}
	r.fail(fmt.Errorf("unsupported pointer format %#x", f))
	return 0
}

// skipPointer reads past a pointer stored with encoding enc without
// interpreting it.
func (r *reader) skipPointer(enc byte) {
	switch {
	case enc == peOmit:
	case enc&peApplyMask == peAligned:
		r.bytes(int((8 - r.pos()%8) % 8))
		r.u64()
	default:
		r.value(enc & peFormatMask)
	}
}
