package inline

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/profile-dev/profile/attach/internal/stub"
)

// target is a fake target memory that records the order of writes.
type target struct {
	mem    map[uint64]uint64
	order  []uint64
	failAt uint64
}

func (m *target) write(addr uint64, b []byte) error {
	if addr == m.failAt {
		return errors.New("no")
	}
	m.mem[addr] = binary.LittleEndian.Uint64(b)
	m.order = append(m.order, addr)
	return nil
}

func TestInsertWritesStateThenKey(t *testing.T) {
	s := New[int](0x10000, stub.DataSize)
	m := &target{mem: map[uint64]uint64{}}
	const fs = 0x7f0000001000
	if !s.Insert(fs, 0xabc, m.write) {
		t.Fatal("insert failed")
	}
	e := s.entry(stub.TableHash(fs))
	if len(m.order) != 2 || m.order[0] != e+8 || m.order[1] != e {
		t.Fatalf("writes at %#x, want state %#x then key %#x", m.order, e+8, e)
	}
	if m.mem[e] != fs || m.mem[e+8] != 0xabc {
		t.Fatalf("entry %#x/%#x", m.mem[e], m.mem[e+8])
	}
	if at, ok := s.StateOf(fs); !ok || at != e+8 {
		t.Fatalf("StateOf %#x %v", at, ok)
	}
	// The same thread pointer again (a new thread on a reused stack):
	// the same entry.
	if !s.Insert(fs, 0xdef, m.write) || m.mem[e+8] != 0xdef || len(s.keys) != 1 {
		t.Fatalf("reinsert: state %#x, %d keys", m.mem[e+8], len(s.keys))
	}
}

func TestInsertProbesPastTakenEntries(t *testing.T) {
	s := New[int](0x10000, stub.DataSize)
	m := &target{mem: map[uint64]uint64{}}
	const fs = 0x7f0000002000
	h := stub.TableHash(fs)
	s.used[h] = true // another key's
	s.used[(h+1)%stub.TableSize] = true
	if !s.Insert(fs, 1, m.write) {
		t.Fatal("insert failed")
	}
	if at, _ := s.StateOf(fs); at != s.entry((h+2)%stub.TableSize)+8 {
		t.Fatalf("state at %#x, want entry %d", at, (h+2)%stub.TableSize)
	}
}

func TestInsertFailsCleanly(t *testing.T) {
	s := New[int](0x10000, stub.DataSize)
	const fs = 0x7f0000003000
	m := &target{mem: map[uint64]uint64{}, failAt: s.entry(stub.TableHash(fs))}
	if s.Insert(fs, 1, m.write) {
		t.Fatal("insert succeeded though its key could not be written")
	}
	if _, ok := s.StateOf(fs); ok || s.used[stub.TableHash(fs)] {
		t.Fatal("a key not written is in the table")
	}
	full := New[int](0x10000, stub.DataSize)
	for i := range full.used {
		full.used[i] = true
	}
	if full.Insert(fs, 1, (&target{mem: map[uint64]uint64{}}).write) {
		t.Fatal("insert into a full table succeeded")
	}
}

func TestSlots(t *testing.T) {
	s := New[string](0x10000, stub.DataSize)
	a, _ := s.Alloc()
	b, _ := s.Alloc()
	if a != 0 || b != 1 {
		t.Fatalf("slots %d %d", a, b)
	}
	s.Assign(a, 100, 0x1000, "t100")
	s.Assign(b, 101, 0x2000, "t101")
	s.Free(100, a)
	if _, ok := s.TidSlot[100]; ok || s.Owner[a] != "" {
		t.Fatal("freed thread still held")
	}
	if c, _ := s.Alloc(); c != a {
		t.Fatalf("slot %d, want the freed %d", c, a)
	}
	c := s.Fork(b)
	if c.next != 2 || len(c.free) != 1 || c.free[0] != 0 {
		t.Fatalf("fork: %d slots, free %v, want slot 0 free and 1 kept", c.next, c.free)
	}
	if len(c.Owner) != 0 || c.Mem != nil {
		t.Fatal("a forked space starts with no owners and no rings of its own")
	}
	for range stub.MaxSlots - 2 {
		if _, ok := s.Alloc(); !ok {
			t.Fatal("ran out early")
		}
	}
	if _, ok := s.Alloc(); ok {
		t.Fatalf("more than %d slots", stub.MaxSlots)
	}
}
