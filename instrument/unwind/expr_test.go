package unwind

import (
	"errors"
	"testing"
)

func TestEvalExpr(t *testing.T) {
	// The PLT stub expression: CFA = rsp+8, plus 8 more once the stub has
	// pushed its relocation index (at offset 11 of the 16-byte stub).
	plt := []byte{opBreg0 + regRSP, 8, opBreg0 + regRIP, 0, opLit0 + 15, opAnd, opLit0 + 11, opGe, opLit0 + 3, opShl, opPlus}
	mem := words(0x8000, 0x1122334455667788, 0x9000).read
	regsAt := func(rip uint64) *regFile {
		f := Regs{RIP: rip, RSP: 0x7000, RBP: 0x8000}.file()
		return &f
	}
	cases := []struct {
		name    string
		expr    []byte
		rip     uint64
		push    []uint64
		want    uint64
		wantErr error // errAny: any error
	}{
		{"plt before push", plt, 0x1026, nil, 0x7008, nil},
		{"plt after push", plt, 0x102b, nil, 0x7010, nil},
		{"plt next stub", plt, 0x1030, nil, 0x7008, nil},
		{"signal CFA deref", []byte{opBreg0 + regRBP, 8, opDeref}, 0, nil, 0x9000, nil},
		{"deref_size", []byte{opBreg0 + regRBP, 0, opDerefSize, 2}, 0, nil, 0x7788, nil},
		{"bregx negative", cat([]byte{opBregx, regRSP}, sleb(-16)), 0, nil, 0x6ff0, nil},
		{"pushed CFA", []byte{opPlusUconst, 0x10}, 0, []uint64{0x100}, 0x110, nil},
		{"constants", cat([]byte{opConst1s, 0xff, opConst2u, 0x34, 0x12, opPlus, opConsts}, sleb(-0x1233), []byte{opPlus}), 0, nil, 0, nil},
		{"const4s and 8u", []byte{opConst4s, 0xfe, 0xff, 0xff, 0xff, opConst8u, 2, 0, 0, 0, 0, 0, 0, 0, opPlus}, 0, nil, 0, nil},
		{"addr and constu", cat([]byte{opAddr}, encode(peAbsptr, 0x400000), []byte{opConstu}, uleb(0x1234), []byte{opMinus}), 0, nil, 0x400000 - 0x1234, nil},
		// (1 2 3) rot gives (3 1 2); the digits read it back top first.
		{"rot", []byte{opLit0 + 1, opLit0 + 2, opLit0 + 3, opRot, opLit0 + 10, opMul, opPlus, opSwap, opConst1u, 100, opMul, opPlus}, 0, nil, 321, nil},
		{"over", []byte{opLit0 + 5, opLit0 + 7, opOver}, 0, nil, 5, nil},
		{"pick 2", []byte{opLit0 + 5, opLit0 + 7, opLit0 + 9, opPick, 2}, 0, nil, 5, nil},
		{"pick 1", []byte{opLit0 + 5, opLit0 + 7, opLit0 + 9, opPick, 1}, 0, nil, 7, nil},
		{"drop", []byte{opLit0 + 5, opLit0 + 7, opDrop}, 0, nil, 5, nil},
		{"swap minus", []byte{opLit0 + 5, opLit0 + 7, opSwap, opMinus}, 0, nil, 2, nil},
		{"pick too deep", []byte{opLit0 + 5, opPick, 1}, 0, nil, 0, errExprStack},
		{"dup neg abs not", []byte{opLit0 + 5, opDup, opNeg, opAbs, opMinus, opNot}, 0, nil, ^uint64(0), nil},
		{"shifts signed", []byte{opLit0 + 8, opNeg, opLit0 + 2, opShra, opLit0 + 1, opShr}, 0, nil, ^uint64(1) >> 1, nil},
		{"div mod or xor", []byte{opLit0 + 9, opNeg, opLit0 + 2, opDiv, opLit0 + 7, opMod, opLit0 + 8, opOr, opLit0 + 1, opXor}, 0, nil, (uint64(1<<64-4) % 7) | 8 ^ 1, nil},
		{"signed comparisons", []byte{opLit0 + 1, opNeg, opLit0, opLt, opLit0 + 1, opNeg, opLit0, opGt, opPlus, opLit0 + 3, opLit0 + 3, opLe, opPlus, opLit0 + 3, opLit0 + 3, opEq, opPlus, opLit0 + 3, opLit0 + 3, opNe, opPlus}, 0, nil, 3, nil},
		{"bra taken", []byte{opLit0 + 1, opBra, 1, 0, opLit0 + 5, opLit0 + 7}, 0, nil, 7, nil},
		{"bra not taken", []byte{opLit0, opBra, 1, 0, opLit0 + 5}, 0, nil, 5, nil},
		{"skip", []byte{opLit0 + 2, opSkip, 1, 0, opLit0 + 5, opNop}, 0, nil, 2, nil},
		{"unknown register", []byte{opBreg0 + regRAX, 0}, 0, nil, 0, errUnknownValue},
		{"underflow", []byte{opPlus}, 0, nil, 0, errExprStack},
		{"empty result", []byte{}, 0, nil, 0, errExprStack},
		{"division by zero", []byte{opLit0 + 1, opLit0, opDiv}, 0, nil, 0, errAny},
		{"unsupported op", []byte{0x50}, 0, nil, 0, errAny},
		{"read error", []byte{opLit0, opDeref}, 0, nil, 0, errAny},
		{"endless loop", []byte{opSkip, 0xfd, 0xff}, 0, nil, 0, errAny},
		{"branch outside", []byte{opSkip, 0x10, 0}, 0, nil, 0, errAny},
		{"truncated operand", []byte{opConst4u, 1}, 0, nil, 0, errShort},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := evalExpr(c.expr, regsAt(c.rip), mem, c.push...)
			if c.wantErr != nil {
				if err == nil || (c.wantErr != errAny && !errors.Is(err, c.wantErr)) {
					t.Fatalf("= %#x, %v; want error %v", got, err, c.wantErr)
				}
				return
			}
			if err != nil || got != c.want {
				t.Errorf("= %#x, %v; want %#x", got, err, c.want)
			}
		})
	}
}

// errAny in a table means that any error will do.
var errAny = errors.New("any error")
