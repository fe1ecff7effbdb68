package instrument

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"
)

// CallSites on the workloads' own binaries: what reaches each function,
// found by a sweep of the whole module.
func TestCallSites(t *testing.T) {
	cases := []struct {
		workload, fn string
		sites        []byte // the opcode of each site, in address order
		refuse       string // a word of the reason, "" if found
	}{
		// main calls it, via_tail jumps to it (jmp rel32)
		{"sites", "loop_entry", []byte{0xe8, 0xe9}, ""},
		{"sites", "tiny", []byte{0xe8}, ""},
		// its address is in data (keep)
		{"hottrap", "spin", nil, "address"},
		// tail_to_loop reaches it with jmp rel8
		{"trapcost", "loop_head", nil, "short jmp"},
		// _start passes its address to __libc_start_main (lea main(%rip))
		{"sites", "main", nil, "address is taken"},
	}
	mods := map[string]*Module{}
	for _, c := range cases {
		t.Run(c.workload+"/"+c.fn, func(t *testing.T) {
			m := mods[c.workload]
			if m == nil {
				var err error
				if m, err = Open(workloadPath(t, c.workload)); err != nil {
					t.Fatal(err)
				}
				mods[c.workload] = m
			}
			var sym Symbol
			for _, s := range m.Symbols {
				if s.Name == c.fn {
					sym = s
				}
			}
			sites, err := m.CallSites(sym)
			if c.refuse != "" {
				if !errors.Is(err, ErrSitesUnknown) || !strings.Contains(err.Error(), c.refuse) {
					t.Fatalf("CallSites = %v, %v; want a refusal naming %q", sites, err, c.refuse)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(sites) != len(c.sites) {
				t.Fatalf("%d sites %+v, want %d", len(sites), sites, len(c.sites))
			}
			for i, s := range sites {
				b, err := m.ReadAt(s.At, s.Len)
				if err != nil {
					t.Fatal(err)
				}
				to := s.At + uint64(s.Len) + uint64(int64(int32(binary.LittleEndian.Uint32(b[s.Disp:]))))
				if b[0] != c.sites[i] || to != sym.Value || s.Disp+4 != s.Len {
					t.Errorf("site %d at %#x: % x goes to %#x, want opcode %#x to %#x", i, s.At, b, to, c.sites[i], sym.Value)
				}
			}
		})
	}
}

// PlanSites re-aims each branch's rel32 at the trampoline, which calls the
// entry stub and jumps to the function; a branch that does not go to the
// function is refused.
func TestPlanSites(t *testing.T) {
	const addr, bias, tramp = 0x401000, 0x1000, 0x10001000
	disp := func(from, n uint64) uint32 { return uint32(int32(int64(addr) - int64(from+bias+n))) }
	call := []byte{0xe8, 0, 0, 0, 0}
	binary.LittleEndian.PutUint32(call[1:], disp(0x400100, 5))
	jcc := []byte{0x0f, 0x84, 0, 0, 0, 0}
	binary.LittleEndian.PutUint32(jcc[2:], disp(0x400200, 6))
	sites := []BranchSite{{At: 0x400100, Len: 5, Disp: 1}, {At: 0x400200, Len: 6, Disp: 2}}
	p, err := PlanSites(addr, bias, tramp, testStubs, 9, sites, [][]byte{call, jcc})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Sites) != 2 {
		t.Fatalf("%d sites", len(p.Sites))
	}
	for i, s := range p.Sites {
		n := len(s.New)
		if to := s.At + uint64(n) + uint64(int64(int32(binary.LittleEndian.Uint32(s.New[n-4:])))); to != tramp || s.New[0] != s.Orig[0] {
			t.Errorf("site %d: % x goes to %#x, want the trampoline", i, s.New, to)
		}
	}
	back := p.Tramp[trampHdr:]
	if back[0] != 0xe9 || tramp+trampHdr+5+uint64(int64(int32(binary.LittleEndian.Uint32(back[1:])))) != addr || len(back) != 5 {
		t.Errorf("trampoline ends % x, want jmp %#x", back, addr)
	}
	binary.LittleEndian.PutUint32(call[1:], 0)
	if _, err := PlanSites(addr, bias, tramp, testStubs, 9, sites, [][]byte{call, jcc}); err == nil || !strings.Contains(err.Error(), "not the function") {
		t.Errorf("a branch elsewhere: err %v", err)
	}
}
