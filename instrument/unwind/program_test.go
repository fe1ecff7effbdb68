package unwind

import (
	"errors"
	"reflect"
	"testing"
)

func TestRowAt(t *testing.T) {
	const lo, hi = 0x1000, 0x100000
	type query struct {
		pc   uint64 // offset from lo
		cfa  cfaRule
		regs map[uint64]rule // the rules to check; others are not checked
	}
	raAt8 := rule{kind: ruleOffset, off: -8}
	plt := []byte{opBreg0 + regRSP, 8, opBreg0 + regRIP, 0, opLit0 + 15, opAnd, opLit0 + 11, opGe, opLit0 + 3, opShl, opPlus}
	cases := []struct {
		name    string
		initial []byte // CIE instructions; nil means x86Initial
		enc     byte   // the CIE's FDE pointer encoding
		insAddr uint64
		ins     []byte
		queries []query
	}{
		{name: "frame pointer prologue", ins: []byte{
			cfaAdvanceLoc | 1, cfaDefCFAOffset, 16, cfaOffset | regRBP, 2,
			cfaAdvanceLoc | 3, cfaDefCFARegister, regRBP,
		}, queries: []query{
			{0, cfaRule{reg: regRSP, off: 8}, map[uint64]rule{regRBP: {}, regRIP: raAt8}},
			{1, cfaRule{reg: regRSP, off: 16}, map[uint64]rule{regRBP: {kind: ruleOffset, off: -16}, regRIP: raAt8}},
			{3, cfaRule{reg: regRSP, off: 16}, nil},
			{4, cfaRule{reg: regRBP, off: 16}, map[uint64]rule{regRBP: {kind: ruleOffset, off: -16}}},
			{0xfff, cfaRule{reg: regRBP, off: 16}, nil},
		}},
		{name: "epilogue remember and restore state", ins: []byte{
			cfaAdvanceLoc | 1, cfaDefCFAOffset, 16, cfaOffset | regRBX, 2,
			cfaAdvanceLoc | 10, cfaRememberState, cfaDefCFAOffset, 8, cfaRestore | regRBX,
			cfaAdvanceLoc | 1, cfaRestoreState,
		}, queries: []query{
			{5, cfaRule{reg: regRSP, off: 16}, map[uint64]rule{regRBX: {kind: ruleOffset, off: -16}}},
			{11, cfaRule{reg: regRSP, off: 8}, map[uint64]rule{regRBX: {}}},
			{12, cfaRule{reg: regRSP, off: 16}, map[uint64]rule{regRBX: {kind: ruleOffset, off: -16}}},
		}},
		{name: "advance_loc1, 2 and 4", ins: []byte{
			cfaAdvanceLoc1, 0x10, cfaDefCFAOffset, 16,
			cfaAdvanceLoc2, 0x00, 0x01, cfaDefCFAOffset, 24,
			cfaAdvanceLoc4, 0x00, 0x00, 0x01, 0x00, cfaDefCFAOffset, 32,
		}, queries: []query{
			{0xf, cfaRule{reg: regRSP, off: 8}, nil},
			{0x10, cfaRule{reg: regRSP, off: 16}, nil},
			{0x10f, cfaRule{reg: regRSP, off: 16}, nil},
			{0x110, cfaRule{reg: regRSP, off: 24}, nil},
			{0x1010f, cfaRule{reg: regRSP, off: 24}, nil},
			{0x10110, cfaRule{reg: regRSP, off: 32}, nil},
		}},
		{name: "set_loc absptr", enc: peAbsptr, ins: cat(
			[]byte{cfaSetLoc}, encode(peAbsptr, lo+0x20), []byte{cfaDefCFAOffset, 48},
		), queries: []query{
			{0x1f, cfaRule{reg: regRSP, off: 8}, nil},
			{0x20, cfaRule{reg: regRSP, off: 48}, nil},
		}},
		{name: "set_loc pcrel", enc: pePcrel | peSdata4, insAddr: 0x800, ins: cat(
			// The operand is at 0x801 and relative to itself.
			[]byte{cfaSetLoc}, encode(peSdata4, lo+0x30-0x801), []byte{cfaDefCFAOffset, 48},
		), queries: []query{
			{0x2f, cfaRule{reg: regRSP, off: 8}, nil},
			{0x30, cfaRule{reg: regRSP, off: 48}, nil},
		}},
		{name: "factored signed forms", ins: cat(
			[]byte{cfaDefCFASF, regRSP}, sleb(-2),
			[]byte{cfaOffsetExtendedSF, regRBX}, sleb(2),
			[]byte{cfaGNUNegativeOffsetExtend, regR12}, uleb(1),
			[]byte{cfaAdvanceLoc | 2, cfaDefCFAOffsetSF}, sleb(-4),
		), queries: []query{
			{0, cfaRule{reg: regRSP, off: 16}, map[uint64]rule{
				regRBX: {kind: ruleOffset, off: -16}, regR12: {kind: ruleOffset, off: 8},
			}},
			{2, cfaRule{reg: regRSP, off: 32}, nil},
		}},
		{name: "register rules", ins: []byte{
			cfaUndefined, regRIP, cfaSameValue, regRBX, cfaRegister, regRBP, regRDX,
			cfaValOffset, regR12, 2, cfaValOffsetSF, regR13, 0x7f,
			cfaOffsetExtended, regR14, 3, cfaOffsetExtended, 17, 1, // xmm0: ignored
			cfaNop, cfaGNUArgsSize, 16,
			cfaAdvanceLoc | 1, cfaRestoreExtended, regR14, cfaRestoreExtended, regRIP,
		}, queries: []query{
			{0, cfaRule{reg: regRSP, off: 8}, map[uint64]rule{
				regRIP: {kind: ruleUndefined}, regRBX: {kind: ruleSame},
				regRBP: {kind: ruleRegister, reg: regRDX},
				regR12: {kind: ruleValOffset, off: -16}, regR13: {kind: ruleValOffset, off: 8},
				regR14: {kind: ruleOffset, off: -24},
			}},
			{1, cfaRule{reg: regRSP, off: 8}, map[uint64]rule{regR14: {}, regRIP: raAt8}},
		}},
		{name: "expressions", ins: cat(
			[]byte{cfaAdvanceLoc | 6, cfaDefCFAExpression}, uleb(uint64(len(plt))), plt,
			[]byte{cfaExpression, regRBX, 2, opBreg0 + regRSP, 40},
			[]byte{cfaValExpression, regR12, 1, opLit0 + 7},
			[]byte{cfaAdvanceLoc | 1, cfaDefCFA, regRSP, 8},
		), queries: []query{
			{6, cfaRule{expr: plt}, map[uint64]rule{
				regRBX: {kind: ruleExpr, expr: []byte{opBreg0 + regRSP, 40}},
				regR12: {kind: ruleValExpr, expr: []byte{opLit0 + 7}},
			}},
			{7, cfaRule{reg: regRSP, off: 8}, nil},
		}},
		{name: "restore goes back to the CIE's rule",
			initial: cat(x86Initial(), []byte{cfaOffset | regRBP, 2}),
			ins:     []byte{cfaOffset | regRBP, 3, cfaAdvanceLoc | 1, cfaRestore | regRBP},
			queries: []query{
				{0, cfaRule{reg: regRSP, off: 8}, map[uint64]rule{regRBP: {kind: ruleOffset, off: -24}}},
				{1, cfaRule{reg: regRSP, off: 8}, map[uint64]rule{regRBP: {kind: ruleOffset, off: -16}}},
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			initial := c.initial
			if initial == nil {
				initial = x86Initial()
			}
			f := fde{lo: lo, hi: hi, ins: c.ins, insAddr: c.insAddr,
				cie: &cie{codeAlign: 1, dataAlign: -8, raReg: regRIP, fdeEnc: c.enc, initial: initial}}
			for _, q := range c.queries {
				rw, err := f.rowAt(lo + q.pc)
				if err != nil {
					t.Fatalf("rowAt(+%#x): %v", q.pc, err)
				}
				if !reflect.DeepEqual(rw.cfa, q.cfa) {
					t.Errorf("rowAt(+%#x) CFA = %+v, want %+v", q.pc, rw.cfa, q.cfa)
				}
				for n, want := range q.regs {
					if got := rw.regs[n]; !reflect.DeepEqual(got, want) {
						t.Errorf("rowAt(+%#x) r%d = %+v, want %+v", q.pc, n, got, want)
					}
				}
			}
		})
	}
}

func TestRowAtErrors(t *testing.T) {
	cases := []struct {
		name string
		ins  []byte
		want error // nil: any error
	}{
		{"unknown instruction", []byte{0x2d}, nil},
		{"restore_state without remember", []byte{cfaRestoreState}, errStateStack},
		{"truncated operand", []byte{cfaDefCFA, regRSP}, errShort},
		{"truncated block", []byte{cfaDefCFAExpression, 5, 1}, errShort},
		{"set_loc backwards", cat([]byte{cfaSetLoc}, encode(peAbsptr, 0x10)), nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := fde{lo: 0x1000, hi: 0x2000, ins: c.ins,
				cie: &cie{codeAlign: 1, dataAlign: -8, raReg: regRIP, initial: x86Initial()}}
			_, err := f.rowAt(0x1fff)
			if err == nil || (c.want != nil && !errors.Is(err, c.want)) {
				t.Errorf("rowAt: error %v, want %v", err, c.want)
			}
		})
	}
}
