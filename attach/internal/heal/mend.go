package heal

import (
	"encoding/binary"
	"fmt"
	"io"
)

// Memory is a process's memory as /proc/PID/mem gives it: read and
// written at its addresses, text included.
type Memory interface {
	io.ReaderAt
	io.WriterAt
}

// Mend does from outside, at once, what the handler does at the first trap
// after the tracer's death: it puts back the original bytes the table of
// the heal area at base lists, through mem. The handler needs a thread to
// take one of our int3s with SIGTRAP deliverable; a thread that blocks it
// (a pool of workers leaving signals to one thread, jemalloc's background
// thread) is killed by the kernel instead, and until some other thread
// traps, every int3 stays.
//
// It restores only what cannot run as it is: a live breakpoint whose int3
// is there, and a rewrite whose guarding int3 is still on its first byte
// (its other bytes first, the int3 last, as no thread can be past it).
// A rewrite that got its new first byte is a complete patch, which works
// without its tracer; putting its bytes back one at a time under running
// threads would tear it. It returns how many bytes it put back.
func Mend(mem Memory, base uint64) (int, error) {
	ents, err := readTable(mem, base)
	if err != nil {
		return 0, err
	}
	put := 0
	for i := 0; i < len(ents); {
		// A rewrite's block: its tails, then its first byte's entry.
		j := i
		for j < len(ents) && ents[j].Tail {
			j++
		}
		if j == len(ents) {
			break
		}
		first := ents[j]
		block := ents[i : j+1]
		i = j + 1
		if !first.Live {
			continue
		}
		var now [1]byte
		if _, err := mem.ReadAt(now[:], int64(first.Addr)); err != nil || now[0] != 0xcc {
			continue // unmapped, never written, or complete
		}
		for _, e := range block {
			if e.Live {
				if _, err := mem.WriteAt([]byte{e.Orig}, int64(e.Addr)); err == nil {
					put++
				}
			}
		}
	}
	return put, nil
}

// WriteTable writes ents as the table of the heal area at base, through
// mem, as the tracer keeps it (each byte's page protection left 0): for a
// watcher's tests, which have no tracer.
func WriteTable(mem Memory, base uint64, ents []Entry) error {
	tab := make([]byte, len(ents)*entrySize)
	for i, e := range ents {
		putEntry(tab[i*entrySize:], e, 0)
	}
	if _, err := mem.WriteAt(tab, int64(base+table)); err != nil {
		return err
	}
	var cnt [8]byte
	binary.LittleEndian.PutUint64(cnt[:], uint64(len(ents)))
	_, err := mem.WriteAt(cnt[:], int64(base+count))
	return err
}

// TableSize is the bytes a heal area of n entries spans up to its table's
// end.
func TableSize(n int) int { return table + n*entrySize }

// readTable reads the table of the heal area at base: {addr u64, orig u8,
// prot u8, live u8, tail u8, pad} each, as heal.S reads it.
func readTable(mem io.ReaderAt, base uint64) ([]Entry, error) {
	var cnt [8]byte
	if _, err := mem.ReadAt(cnt[:], int64(base+count)); err != nil {
		return nil, fmt.Errorf("heal table at %#x: %w", base, err)
	}
	n := min(binary.LittleEndian.Uint64(cnt[:]), Capacity)
	if n == 0 {
		return nil, nil
	}
	tab := make([]byte, n*entrySize)
	if _, err := mem.ReadAt(tab, int64(base+table)); err != nil {
		return nil, fmt.Errorf("heal table at %#x: %w", base, err)
	}
	ents := make([]Entry, n)
	for i := range ents {
		b := tab[i*entrySize:]
		ents[i] = Entry{binary.LittleEndian.Uint64(b), b[8], b[entryLive] != 0, b[entryTail] != 0}
	}
	return ents, nil
}

// putEntry encodes e, on a page of protection prot, into b.
func putEntry(b []byte, e Entry, prot byte) {
	binary.LittleEndian.PutUint64(b, e.Addr)
	b[8], b[9], b[entryLive], b[entryTail] = e.Orig, prot, 0, 0
	if e.Live {
		b[entryLive] = 1
	}
	if e.Tail {
		b[entryTail] = 1
	}
}
