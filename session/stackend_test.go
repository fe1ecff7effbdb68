package session

import (
	"testing"

	"github.com/profile-dev/profile/instrument"
	"github.com/profile-dev/profile/model"
)

// StackEnd reads the maps only when sp leaves the stack it knows: not for
// a stack SetStack told, nor once the thread's image is gone (the maps
// then describe another image), where it gives 0 for what it does not
// know.
func TestStackEndReads(t *testing.T) {
	cases := []struct {
		name      string
		set       [2]uint64 // SetStack, if any
		gone      bool
		sps       []uint64
		wantEnds  []uint64
		wantReads int
	}{
		{"unknown stack: one read", [2]uint64{}, false, []uint64{stackHi - 8, stackHi - 64}, []uint64{stackHi, stackHi}, 1},
		{"another stack: read again", [2]uint64{}, false, []uint64{stackHi - 8, altHi - 8}, []uint64{stackHi, altHi}, 2},
		{"told: no read", [2]uint64{stackLo - 0x100000, stackHi}, false, []uint64{stackHi - 8, stackLo - 8}, []uint64{stackHi, stackHi}, 0},
		{"unmapped: read each time", [2]uint64{}, false, []uint64{0x1000, 0x1000}, []uint64{0, 0}, 2},
		{"gone: no read", [2]uint64{}, true, []uint64{stackHi - 8, 0x1000}, []uint64{0, 0}, 0},
		{"gone, told: the stack it knew", [2]uint64{stackLo, stackHi}, true, []uint64{stackHi - 8, altHi - 8}, []uint64{stackHi, 0}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var now int64
			s := testSession(&now)
			reads := 0
			maps := s.readMaps
			s.readMaps = func(pid int) ([]instrument.Mapping, error) {
				reads++
				return maps(pid)
			}
			p := s.NewProcess(ProcessInfo{Pid: pid, Exe: "/bin/prog"}, nil, model.None, nil)
			th := s.NewThread(pid, p, nil, model.None, "prog")
			if c.set[1] != 0 {
				s.SetStack(th, c.set[0], c.set[1])
			}
			if c.gone {
				s.ImageGone(th)
			}
			for i, sp := range c.sps {
				if got := s.StackEnd(th, sp); got != c.wantEnds[i] {
					t.Errorf("sp %#x: end %#x, want %#x", sp, got, c.wantEnds[i])
				}
			}
			if reads != c.wantReads {
				t.Errorf("%d reads of the maps, want %d", reads, c.wantReads)
			}
		})
	}
}
