package instrument

import (
	"errors"
	"io"
	"os"
	"strconv"
)

// FileBytes reads what the file mapped at addr in process pid (whose
// mappings are maps) holds there: the bytes a mapping of it had before
// anything was written to it. Past the file's end a mapped page reads as
// zeros.
func FileBytes(pid int, maps []Mapping, addr uint64, n int) ([]byte, error) {
	for _, m := range maps {
		if addr < m.Start || addr+uint64(n) > m.End || m.Path == "" || m.Path[0] == '[' {
			continue
		}
		// map_files opens the very file mapped, even one since replaced.
		f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/map_files/" +
			strconv.FormatUint(m.Start, 16) + "-" + strconv.FormatUint(m.End, 16))
		if err != nil {
			if f, err = os.Open(m.Path); err != nil {
				return nil, err
			}
		}
		defer f.Close()
		b := make([]byte, n)
		k, err := f.ReadAt(b, int64(m.Offset+addr-m.Start))
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		clear(b[k:])
		return b, nil
	}
	return nil, errors.New("not in a file mapping")
}
