package inline

import (
	"encoding/binary"
	"testing"

	"github.com/profile-dev/profile/attach/internal/stub"
)

// put writes event index i as a stub commits it: its words, then the
// commit word (index+1, id above it) last.
func put(r Ring, i uint64, id uint32, w ...uint64) {
	off := stub.REvents + int(i%stub.RingEvents)*stub.EventSize
	for k, v := range w {
		binary.LittleEndian.PutUint64(r.mem[off+8+8*k:], v)
	}
	binary.LittleEndian.PutUint64(r.mem[off:], uint64(id)<<32|uint64(uint32(i+1)))
}

func newRing(head uint64) Ring {
	r := Ring{mem: make([]byte, stub.RingStride)}
	binary.LittleEndian.PutUint64(r.mem[stub.RTail:], head)
	binary.LittleEndian.PutUint64(r.mem[stub.RHead:], head)
	return r
}

func reserve(r Ring, n uint64) {
	binary.LittleEndian.PutUint64(r.mem[stub.RHead:], binary.LittleEndian.Uint64(r.mem[stub.RHead:])+n)
}

func tail(r Ring) uint64 { return binary.LittleEndian.Uint64(r.mem[stub.RTail:]) }

func TestDrain(t *testing.T) {
	type want struct {
		id           uint32
		tick, sp, rt uint64
		args         []uint64 // nil: none
	}
	tests := []struct {
		name  string
		start uint64 // the ring's head and tail before
		fill  func(r Ring)
		want  []want
		tail  uint64 // after
	}{
		{"entry and exit", 0, func(r Ring) {
			reserve(r, 2)
			put(r, 0, 7, 100, 0x7ff0, 0x401000)
			put(r, 1, stub.ExitID, 150, 0x7ff8, 42)
		}, []want{{7, 100, 0x7ff0, 0x401000, nil}, {stub.ExitID, 150, 0x7ff8, 42, nil}}, 2},
		{"a reserved slot not committed holds what follows", 0, func(r Ring) {
			reserve(r, 3)
			put(r, 0, 1, 10, 20, 30)
			put(r, 2, 2, 11, 21, 31) // slot 1 is a stub's interrupted by a signal
		}, []want{{1, 10, 20, 30, nil}}, 1},
		{"a stale commit word of the last lap is not an event", stub.RingEvents, func(r Ring) {
			reserve(r, 1)
			put(r, 0, 9, 1, 2, 3) // index 0: commit word 1, not RingEvents+1
		}, nil, stub.RingEvents},
		{"detail entry with two argument slots", 5, func(r Ring) {
			reserve(r, 3)
			put(r, 5, 3|stub.FlagDetail, 100, 200, 300)
			put(r, 6, stub.ArgsID, 1, 2, 3)
			put(r, 7, stub.ArgsID, 4, 5, 6)
		}, []want{{3, 100, 200, 300, []uint64{1, 2, 3, 4, 5, 6}}}, 8},
		{"detail entry with three registers", 0, func(r Ring) {
			reserve(r, 2)
			put(r, 0, 3|stub.FlagDetail|stub.FlagArgs3, 100, 200, 300)
			put(r, 1, stub.ArgsID, 1, 2, 3)
		}, []want{{3, 100, 200, 300, []uint64{1, 2, 3, 0, 0, 0}}}, 2},
		{"detail entry whose arguments are not committed: none", 0, func(r Ring) {
			reserve(r, 3)
			put(r, 0, 3|stub.FlagDetail, 100, 200, 300)
		}, []want{{3, 100, 200, 300, nil}}, 3},
		{"a frame's arguments", 0, func(r Ring) {
			reserve(r, 3)
			put(r, 0, stub.ArgsFor2ID, 0, 0x7f00, 0)
			put(r, 1, stub.ArgsID, 1, 2, 3)
			put(r, 2, stub.ArgsID, 4, 5, 6)
		}, []want{{stub.ArgsForID, 0, 0x7f00, 0, []uint64{1, 2, 3, 4, 5, 6}}}, 3},
		{"a counted call past the count table keeps its id and the counted function's", 0, func(r Ring) {
			reserve(r, 1)
			put(r, 0, stub.CountedID, 100, 12|stub.FlagExit, 0x401005)
		}, []want{{stub.CountedID, 100, 12 | stub.FlagExit, 0x401005, nil}}, 1},
		{"wrapping", stub.RingEvents - 1, func(r Ring) {
			reserve(r, 2)
			put(r, stub.RingEvents-1, 4, 1, 2, 3)
			put(r, stub.RingEvents, stub.ExitID, 4, 5, 6)
		}, []want{{4, 1, 2, 3, nil}, {stub.ExitID, 4, 5, 6, nil}}, stub.RingEvents + 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRing(tc.start)
			tc.fill(r)
			var got []want
			n := r.Drain(func(ev *Event) {
				w := want{ev.ID, ev.Tick, ev.SP, ev.Ret, nil}
				if ev.Args != nil {
					w.args = append([]uint64(nil), ev.Args[:]...)
				}
				got = append(got, w)
			})
			if n != len(tc.want) || len(got) != len(tc.want) {
				t.Fatalf("%d events (%v), want %v", n, got, tc.want)
			}
			for i := range got {
				g, w := got[i], tc.want[i]
				if g.id != w.id || g.tick != w.tick || g.sp != w.sp || g.rt != w.rt || len(g.args) != len(w.args) {
					t.Fatalf("event %d: %+v, want %+v", i, g, w)
				}
				for j := range g.args {
					if g.args[j] != w.args[j] {
						t.Fatalf("event %d args %v, want %v", i, g.args, w.args)
					}
				}
			}
			if got := tail(r); got != tc.tail {
				t.Fatalf("tail %d, want %d", got, tc.tail)
			}
		})
	}
}

func TestResetKeepsCountingIndices(t *testing.T) {
	r := newRing(0)
	reserve(r, 3)
	put(r, 0, 1, 0, 0, 0)
	binary.LittleEndian.PutUint64(r.mem[stub.RDropped:], 5)
	r.Reset()
	if tail(r) != 3 {
		t.Fatalf("tail %d after reset, want the head 3", tail(r))
	}
	if d, _, _, _ := r.Counters(); d != 0 {
		t.Fatalf("%d dropped after reset", d)
	}
	// The old owner's event 0 stays in its slot: not an event of the new one.
	reserve(r, 1)
	if n := r.Drain(func(*Event) {}); n != 0 {
		t.Fatalf("%d events from a stale slot", n)
	}
}
