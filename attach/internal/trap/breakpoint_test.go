package trap

import (
	"encoding/binary"
	"errors"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/profile-dev/profile/instrument"
)

// mem is a fake stopped thread's memory: 8-byte words; ro refuses writes.
type mem struct {
	words map[uint64]uint64
	ro    bool
}

func (m *mem) Read(addr uint64, b []byte) error {
	v, ok := m.words[addr]
	if !ok {
		return errors.New("unmapped")
	}
	binary.LittleEndian.PutUint64(b, v)
	return nil
}

func (m *mem) Write(addr uint64, b []byte) error {
	if m.ro {
		return errors.New("read-only")
	}
	m.words[addr] = binary.LittleEndian.Uint64(b)
	return nil
}

const (
	at = 0x401000
	sp = 0x7ffc0000
)

func plan(t *testing.T, code ...byte) instrument.Plan {
	t.Helper()
	buf := make([]byte, 16)
	copy(buf, code)
	p, err := instrument.PlanAt(buf, at, at+0x100000)
	if err != nil {
		t.Fatalf("plan % x: %v", code, err)
	}
	return p
}

func TestGoOn(t *testing.T) {
	tests := []struct {
		name    string
		code    []byte
		mem     mem
		rip     uint64 // want
		pushed  uint64 // want at sp-8, 0: nothing pushed
		wantErr bool
	}{
		{"push rbp runs out of line", []byte{0x55}, mem{}, at + 0x100000, 0, false},
		{"endbr64 is passed over", []byte{0xf3, 0x0f, 0x1e, 0xfa}, mem{}, at + 4, 0, false},
		{"jmp rel32 goes to its target", []byte{0xe9, 0x00, 0x10, 0x00, 0x00}, mem{}, at + 5 + 0x1000, 0, false},
		{"call rel32 pushes its return address", []byte{0xe8, 0x00, 0x20, 0x00, 0x00}, mem{words: map[uint64]uint64{}}, at + 5 + 0x2000, at + 5, false},
		{"call [rip+disp] reads its target", []byte{0xff, 0x15, 0x00, 0x01, 0x00, 0x00},
			mem{words: map[uint64]uint64{at + 6 + 0x100: 0x405060}}, 0x405060, at + 6, false},
		{"call [rip+disp] unreadable", []byte{0xff, 0x15, 0x00, 0x01, 0x00, 0x00}, mem{words: map[uint64]uint64{}}, at, 0, true},
		{"call with the stack unwritable", []byte{0xe8, 0x00, 0x20, 0x00, 0x00}, mem{words: map[uint64]uint64{}, ro: true}, at, 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := New(at, tc.code[0], plan(t, tc.code...))
			regs := unix.PtraceRegs{Rip: at, Rsp: sp}
			m := tc.mem
			if m.words == nil {
				m.words = map[uint64]uint64{}
			}
			err := GoOn(b, &regs, &m)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err %v, want error %v", err, tc.wantErr)
			}
			if regs.Rip != tc.rip {
				t.Fatalf("rip %#x, want %#x", regs.Rip, tc.rip)
			}
			if tc.pushed == 0 {
				if regs.Rsp != sp {
					t.Fatalf("rsp %#x moved", regs.Rsp)
				}
				return
			}
			if regs.Rsp != sp-8 || m.words[sp-8] != tc.pushed {
				t.Fatalf("rsp %#x, [rsp] %#x, want %#x and %#x", regs.Rsp, m.words[sp-8], sp-8, tc.pushed)
			}
		})
	}
}

func TestBack(t *testing.T) {
	p := plan(t, 0x55) // push rbp; then a jump back to at+1
	b := New(at, 0x55, p)
	for _, tc := range []struct {
		pc   uint64
		want uint64
		ok   bool
	}{
		{p.Slot, at, true},         // not run yet: at the breakpoint
		{p.Slot + 1, at + 1, true}, // run: its jump goes on after it
		{p.Slot - 1, 0, false},
		{p.Slot + uint64(len(p.OOL)), 0, false},
	} {
		got, ok := b.Back(tc.pc)
		if ok != tc.ok || got != tc.want {
			t.Errorf("Back(%#x) = %#x %v, want %#x %v", tc.pc, got, ok, tc.want, tc.ok)
		}
	}
}
