package unwind

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
)

// errShort is wrapped by every read past the end of the data.
var errShort = errors.New("unexpected end of data")

// reader decodes little-endian DWARF data. addr is the link-time address of
// b[0], which pc-relative pointers are relative to. The first failing read
// sets err; later reads return zero and keep it, so a parser checks err once
// after a group of reads.
type reader struct {
	b    []byte
	off  int
	addr uint64
	err  error
}

func (r *reader) fail(err error) {
	if r.err == nil {
		r.err = err
	}
	r.off = len(r.b)
}

func (r *reader) done() bool { return r.err != nil || r.off >= len(r.b) }

// pos is the link-time address of the next byte.
func (r *reader) pos() uint64 { return r.addr + uint64(r.off) }

func (r *reader) bytes(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.b)-r.off {
		r.fail(fmt.Errorf("read %d bytes at offset %#x of %d: %w", n, r.off, len(r.b), errShort))
		return nil
	}
	s := r.b[r.off : r.off+n]
	r.off += n
	return s
}

func (r *reader) u8() uint8 {
	if b := r.bytes(1); b != nil {
		return b[0]
	}
	return 0
}

func (r *reader) u16() uint16 {
	if b := r.bytes(2); b != nil {
		return binary.LittleEndian.Uint16(b)
	}
	return 0
}

func (r *reader) u32() uint32 {
	if b := r.bytes(4); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

func (r *reader) u64() uint64 {
	if b := r.bytes(8); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

// uleb reads an unsigned LEB128 number. Bits beyond 64 are dropped.
func (r *reader) uleb() uint64 {
	var v uint64
	for shift := uint(0); ; shift += 7 {
		b := r.u8()
		if r.err != nil {
			return 0
		}
		if shift < 64 {
			v |= uint64(b&0x7f) << shift
		}
		if b&0x80 == 0 {
			return v
		}
	}
}

// sleb reads a signed LEB128 number. Bits beyond 64 are dropped.
func (r *reader) sleb() int64 {
	var v int64
	for shift := uint(0); ; shift += 7 {
		b := r.u8()
		if r.err != nil {
			return 0
		}
		if shift < 64 {
			v |= int64(b&0x7f) << shift
		}
		if b&0x80 == 0 {
			if shift+7 < 64 && b&0x40 != 0 {
				v |= -1 << (shift + 7)
			}
			return v
		}
	}
}

// cstring reads a NUL-terminated string.
func (r *reader) cstring() string {
	if r.err != nil {
		return ""
	}
	i := bytes.IndexByte(r.b[r.off:], 0)
	if i < 0 {
		r.fail(fmt.Errorf("unterminated string at offset %#x: %w", r.off, errShort))
		return ""
	}
	s := string(r.b[r.off : r.off+i])
	r.off += i + 1
	return s
}

// block reads a ULEB128 length and that many bytes.
func (r *reader) block() []byte {
	n := r.uleb()
	if n > uint64(len(r.b)) {
		r.fail(fmt.Errorf("block of %d bytes at offset %#x: %w", n, r.off, errShort))
		return nil
	}
	return r.bytes(int(n))
}
