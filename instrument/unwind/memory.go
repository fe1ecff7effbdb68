package unwind

import (
	"encoding/binary"
	"fmt"
)

// Memory reads target memory (the tracer passes process_vm_readv). It fills
// buf from addr or returns an error.
type Memory func(addr uint64, buf []byte) error

// read64 reads the little-endian word at addr.
func read64(mem Memory, addr uint64) (uint64, error) {
	var b [8]byte
	if err := mem(addr, b[:]); err != nil {
		return 0, fmt.Errorf("read %#x: %w", addr, err)
	}
	return binary.LittleEndian.Uint64(b[:]), nil
}
