package instrument

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
)

// A function that begins with a call (after an endbr64, and one push)
// takes its probe at that call: re-aimed at a trampoline that pops what
// the function pushed, calls the entry stub as an entry trampoline does,
// pushes it back and jumps to the callee. Other shapes are not its.
func TestPlanCallEntry(t *testing.T) {
	const addr, tramp = 0x401000, 0x10001000
	call := []byte{0xe8, 0x00, 0x01, 0x00, 0x00} // call +0x100
	endbr := []byte{0xf3, 0x0f, 0x1e, 0xfa}
	cat := func(bs ...[]byte) []byte { return bytes.Join(bs, nil) }
	pops := map[int][]byte{0: {0x41, 0x5b}, 1: {0x41, 0x5b, 0x41, 0x5a}}
	pushes := map[int][]byte{0: {0x41, 0x53}, 1: {0x41, 0x52, 0x41, 0x53}}
	cases := []struct {
		name     string
		code     []byte
		branches []EntryBranch
		callAt   int // -1: not its shape
		words    int
		err      error
	}{
		{"call first", cat(call, []byte{0xc3}), nil, 0, 0, nil},
		{"push rbx; call", cat([]byte{0x53}, call, []byte{0x5b, 0xc3}), nil, 1, 1, nil},
		{"push r12; call", cat([]byte{0x41, 0x54}, call, []byte{0x41, 0x5c, 0xc3}), nil, 2, 1, nil},
		{"endbr64; push rbx; call", cat(endbr, []byte{0x53}, call, []byte{0x5b, 0xc3}), nil, 5, 1, nil},
		{"sub rsp; call: in place", cat([]byte{0x48, 0x83, 0xec, 0x08}, call, []byte{0xc3}), nil, -1, 0, ErrNoCallEntry},
		{"two pushes", cat([]byte{0x53, 0x55}, call, []byte{0xc3}), nil, -1, 0, ErrNoCallEntry},
		{"no call", []byte{0x53, 0x48, 0x89, 0xfb, 0x5b, 0xc3}, nil, -1, 0, ErrNoCallEntry},
		{"a branch lands on the call", cat([]byte{0x53}, call, []byte{0xeb, 0xfa}), []EntryBranch{{From: 6, To: 1}}, -1, 0, ErrCannotPatch},
		{"a branch to the entry is fine", cat([]byte{0x53}, call, []byte{0xeb, 0xf8}), []EntryBranch{{From: 6, To: 0}}, 1, 1, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ce, err := PlanCallEntry(c.code, addr, tramp, testStubs, 7, c.branches)
			if c.callAt < 0 {
				if !errors.Is(err, c.err) {
					t.Fatalf("err %v, want %v", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			at := uint64(addr + c.callAt)
			if ce.Site.At != at || !bytes.Equal(ce.Site.Orig, call) || ce.Site.New[0] != 0xe8 ||
				at+5+uint64(int64(int32(binary.LittleEndian.Uint32(ce.Site.New[1:])))) != tramp {
				t.Errorf("site %#x % x -> % x: want the call at %#x re-aimed at the trampoline", ce.Site.At, ce.Site.Orig, ce.Site.New, at)
			}
			tr := ce.Tramp
			if ce.Hdr != len(pops[c.words]) || !bytes.Equal(tr[:ce.Hdr], pops[c.words]) {
				t.Fatalf("trampoline % x: want it to pop % x first", tr, pops[c.words])
			}
			hdr, err := trampHeader(tramp+uint64(ce.Hdr), testStubs, 7)
			if err != nil || !bytes.Equal(tr[ce.Hdr:ce.Hdr+len(hdr)], hdr) {
				t.Fatalf("trampoline % x: want an entry trampoline's header % x", tr, hdr)
			}
			rest := tr[ce.Hdr+len(hdr):]
			push := pushes[c.words]
			if !bytes.Equal(rest[:len(push)], push) || len(rest) != len(push)+5 || rest[len(push)] != 0xe9 {
				t.Fatalf("after the header % x: want % x and a jump", rest, push)
			}
			jmpAt := tramp + uint64(len(tr)-5)
			if to := jmpAt + 5 + uint64(int64(int32(binary.LittleEndian.Uint32(rest[len(push)+1:])))); to != at+5+0x100 {
				t.Errorf("jumps to %#x, want the callee %#x", to, at+5+0x100)
			}
		})
	}
}
