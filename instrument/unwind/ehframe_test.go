package unwind

import (
	"errors"
	"testing"
)

func TestParseEHFrame(t *testing.T) {
	const addr = 0x10000
	type span struct {
		lo, hi uint64
		signal bool
	}
	pcrel4 := byte(pePcrel | peSdata4)
	cases := []struct {
		name    string
		build   func(e *ehBuilder)
		want    []span
		wantErr error
	}{
		{"zR pcrel sdata4", func(e *ehBuilder) {
			c := e.cie(1, "zR", []byte{pcrel4}, x86Initial())
			e.fde(c, pcrel4, 0x401000, 0x20, []byte{}, nil)
		}, []span{{0x401000, 0x401020, false}}, nil},
		{"no augmentation absptr", func(e *ehBuilder) {
			c := e.cie(1, "", nil, x86Initial())
			e.fde(c, peAbsptr, 0x2000, 0x10, nil, nil)
		}, []span{{0x2000, 0x2010, false}}, nil},
		{"zR udata8", func(e *ehBuilder) {
			c := e.cie(1, "zR", []byte{peUdata8}, x86Initial())
			e.fde(c, peUdata8, 0x7f0000001000, 0x8, []byte{}, nil)
		}, []span{{0x7f0000001000, 0x7f0000001008, false}}, nil},
		{"zPLR personality and LSDA", func(e *ehBuilder) {
			aug := []byte{peIndirect | pcrel4, 0x10, 0x20, 0x30, 0x40, pcrel4, pcrel4}
			c := e.cie(1, "zPLR", aug, x86Initial())
			e.fde(c, pcrel4, 0x3000, 0x40, []byte{1, 2, 3, 4}, []byte{cfaAdvanceLoc | 1, cfaDefCFAOffset, 16})
		}, []span{{0x3000, 0x3040, false}}, nil},
		{"zPR aligned personality", func(e *ehBuilder) {
			// At 0x10012 the personality pointer is padded to 0x10018.
			aug := []byte{peAligned, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, pcrel4}
			c := e.cie(1, "zPR", aug, x86Initial())
			e.fde(c, pcrel4, 0x3000, 0x40, []byte{}, nil)
		}, []span{{0x3000, 0x3040, false}}, nil},
		{"zRS signal frame", func(e *ehBuilder) {
			c := e.cie(1, "zRS", []byte{pcrel4}, nil)
			e.fde(c, pcrel4, 0x5000, 0x9, []byte{}, nil)
		}, []span{{0x5000, 0x5009, true}}, nil},
		{"S without z", func(e *ehBuilder) {
			c := e.cie(1, "S", nil, nil)
			e.fde(c, peAbsptr, 0x5000, 0x9, nil, nil)
		}, []span{{0x5000, 0x5009, true}}, nil},
		{"version 3", func(e *ehBuilder) {
			c := e.cie(3, "zR", []byte{peUdata4}, x86Initial())
			e.fde(c, peUdata4, 0x6000, 0x10, []byte{}, nil)
		}, []span{{0x6000, 0x6010, false}}, nil},
		{"64-bit lengths", func(e *ehBuilder) {
			e.long = true
			c := e.cie(1, "zR", []byte{pcrel4}, x86Initial())
			e.fde(c, pcrel4, 0x7000, 0x10, []byte{}, nil)
		}, []span{{0x7000, 0x7010, false}}, nil},
		{"unknown letter after R is skipped", func(e *ehBuilder) {
			c := e.cie(1, "zRX", []byte{pcrel4, 0xaa, 0xbb}, x86Initial())
			e.fde(c, pcrel4, 0x8000, 0x10, []byte{}, nil)
		}, []span{{0x8000, 0x8010, false}}, nil},
		{"unknown augmentation without z drops its FDEs", func(e *ehBuilder) {
			bad := e.cie(1, "xy", nil, x86Initial())
			e.fde(bad, peAbsptr, 0x9000, 0x10, nil, nil)
			good := e.cie(1, "zR", []byte{pcrel4}, x86Initial())
			e.fde(good, pcrel4, 0xa000, 0x10, []byte{}, nil)
		}, []span{{0xa000, 0xa010, false}}, nil},
		{"unsupported version drops its FDEs", func(e *ehBuilder) {
			c := e.cie(2, "zR", []byte{pcrel4}, x86Initial())
			e.fde(c, pcrel4, 0x9000, 0x10, []byte{}, nil)
		}, nil, nil},
		{"empty ranges dropped, rest sorted", func(e *ehBuilder) {
			c := e.cie(1, "zR", []byte{pcrel4}, x86Initial())
			e.fde(c, pcrel4, 0xc000, 0x10, []byte{}, nil)
			e.fde(c, pcrel4, 0xb000, 0, []byte{}, nil)
			e.fde(c, pcrel4, 0xa000, 0x10, []byte{}, nil)
		}, []span{{0xa000, 0xa010, false}, {0xc000, 0xc010, false}}, nil},
		{"FDE whose CIE pointer misses", func(e *ehBuilder) {
			e.cie(1, "zR", []byte{pcrel4}, x86Initial())
			e.fde(4, pcrel4, 0xa000, 0x10, []byte{}, nil)
		}, nil, errors.New("any")},
		{"FDE cut short", func(e *ehBuilder) {
			c := e.cie(1, "zR", []byte{pcrel4}, x86Initial())
			e.fde(c, pcrel4, 0xa000, 0x10, []byte{}, nil)
			e.b = e.b[:len(e.b)-8] // the terminator cannot make up for it
		}, nil, errShort},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := &ehBuilder{addr: addr}
			c.build(e)
			fdes, err := newEHFrame(e.end(), addr).all()
			if c.wantErr != nil {
				if err == nil {
					t.Fatalf("parsed %d FDEs, want an error", len(fdes))
				}
				if errors.Is(c.wantErr, errShort) && !errors.Is(err, errShort) {
					t.Fatalf("error %v, want errShort", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []span
			for _, f := range fdes {
				got = append(got, span{f.lo, f.hi, f.cie.signal})
			}
			if len(got) != len(c.want) {
				t.Fatalf("FDEs %+v, want %+v", got, c.want)
			}
			for i := range got {
				if got[i] != c.want[i] {
					t.Errorf("FDE %d = %+v, want %+v", i, got[i], c.want[i])
				}
			}
		})
	}
}

// TestFDEInstructionsBounded checks that an FDE's instructions end with its
// entry: a CFA program that ran into the next entry would see garbage.
func TestFDEInstructionsBounded(t *testing.T) {
	e := &ehBuilder{addr: 0x1000}
	c := e.cie(1, "zR", []byte{pePcrel | peSdata4}, x86Initial())
	e.fde(c, pePcrel|peSdata4, 0x2000, 0x10, []byte{}, []byte{cfaAdvanceLoc | 4, cfaDefCFAOffset, 16})
	e.fde(c, pePcrel|peSdata4, 0x3000, 0x10, []byte{}, nil)
	fdes, err := newEHFrame(e.end(), e.addr).all()
	if err != nil {
		t.Fatal(err)
	}
	if len(fdes) != 2 {
		t.Fatalf("%d FDEs, want 2", len(fdes))
	}
	want := []byte{cfaAdvanceLoc | 4, cfaDefCFAOffset, 16} // 16 bytes with the id: no padding
	if got := fdes[0].ins; string(got) != string(want) {
		t.Errorf("instructions % x, want % x", got, want)
	}
	if got := fdes[0].cie.initial; string(got[:len(x86Initial())]) != string(x86Initial()) {
		t.Errorf("CIE initial instructions % x, want % x...", got, x86Initial())
	}
}
