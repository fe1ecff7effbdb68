package procfs

import (
	"encoding/binary"
	"fmt"
	"os"
)

// Auxiliary vector entries the engine reads.
const (
	AtBase  = 7 // the dynamic linker's load address
	AtEntry = 9 // the program's entry point
)

// Auxv reads a process's auxiliary vector.
func Auxv(pid int) (map[uint64]uint64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/auxv", pid))
	if err != nil {
		return nil, err
	}
	out := map[uint64]uint64{}
	for i := 0; i+16 <= len(b); i += 16 {
		out[binary.LittleEndian.Uint64(b[i:])] = binary.LittleEndian.Uint64(b[i+8:])
	}
	return out, nil
}
