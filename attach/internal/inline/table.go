package inline

import (
	"encoding/binary"

	"github.com/profile-dev/profile/attach/internal/stub"
)

// Table is which thread has which ring slot, and the tracer's copy of the
// target's table the stubs find their thread's state by (keyed by thread
// pointer, stub.TableHash, linear probing).
type Table[T any] struct {
	keys    map[uint64]int       // thread pointer -> table index, as in the target's table
	used    [stub.TableSize]bool // table entries holding a key
	Owner   map[int]T            // ring slot -> the thread whose events it holds
	TidSlot map[int]int
	TidFS   map[int]uint64
	free    []int
	next    int
	VForks  map[int]T // vfork children (by tid) on their parent's thread pointer
}

func newTable[T any]() Table[T] {
	return Table[T]{keys: map[uint64]int{}, Owner: map[int]T{}, TidSlot: map[int]int{}, TidFS: map[int]uint64{}}
}

// Alloc takes a free slot: false when all stub.MaxSlots are held.
func (t *Table[T]) Alloc() (int, bool) {
	if n := len(t.free); n > 0 {
		slot := t.free[n-1]
		t.free = t.free[:n-1]
		return slot, true
	}
	if t.next < stub.MaxSlots {
		t.next++
		return t.next - 1, true
	}
	return 0, false
}

// Release gives back a slot Alloc took that was never assigned.
func (t *Table[T]) Release(slot int) { t.free = append(t.free, slot) }

// Assign records that thread tid (owner, thread pointer fs) has slot.
func (t *Table[T]) Assign(slot, tid int, fs uint64, owner T) {
	t.Owner[slot] = owner
	t.TidSlot[tid] = slot
	t.TidFS[tid] = fs
}

// Free forgets thread tid and gives its slot back.
func (t *Table[T]) Free(tid, slot int) {
	delete(t.TidSlot, tid)
	delete(t.TidFS, tid)
	delete(t.Owner, slot)
	t.free = append(t.free, slot)
}

// Insert points the target's table entry of thread pointer fs at state:
// the state first, then the key, so a stub never finds a key without
// one. Keys are never removed (a dead thread's entry holds state 0), so
// the lookup never needs tombstones, and glibc's reuse of thread stacks
// keeps the keys few.
func (s *Space[T]) Insert(fs, state uint64, write Writer) bool {
	idx, ok := s.keys[fs]
	if !ok {
		idx = stub.TableHash(fs)
		for n := 0; s.used[idx]; n++ {
			if n == stub.TableSize {
				return false
			}
			idx = (idx + 1) % stub.TableSize
		}
	}
	var w [8]byte
	binary.LittleEndian.PutUint64(w[:], state)
	if write(s.entry(idx)+8, w[:]) != nil {
		return false
	}
	binary.LittleEndian.PutUint64(w[:], fs)
	if write(s.entry(idx), w[:]) != nil {
		return false
	}
	s.keys[fs], s.used[idx] = idx, true
	return true
}

// StateOf is where the target's table entry of thread pointer fs keeps
// its state, if the table has fs.
func (s *Space[T]) StateOf(fs uint64) (uint64, bool) {
	idx, ok := s.keys[fs]
	if !ok {
		return 0, false
	}
	return s.entry(idx) + 8, true
}
