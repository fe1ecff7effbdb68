package instrument

import (
	"errors"
	"testing"
)

func TestDecodeVEX(t *testing.T) {
	tests := []struct {
		name   string
		code   string
		len    int
		ripOff int
		err    bool
	}{
		{"vmovdqu ymm0, [rip+x]", "c5fe6f0510000000", 8, 4, false},
		{"vmovdqu ymm0, ymm1 (mod 3)", "c5fe6fc1", 4, -1, false},
		{"vmovdqu ymm0, [rax+rbx*4+8] (SIB disp8)", "c5fe6f449808", 6, -1, false},
		{"vmovdqu ymm0, [rax+0x100] (disp32)", "c5fe6f8000010000", 8, -1, false},
		{"vmovdqu ymm0, [rbx*4+disp32] (SIB no base)", "c5fe6f049d00100000", 9, -1, false},
		{"vpshufd xmm0, xmm1, 0x1b (map 0F imm8)", "c5f970c11b", 5, -1, false},
		{"vpshufb ymm0, ymm1, [rip+x] (map 0F38, no imm)", "c4e275000510000000", 9, 5, false},
		{"vpalignr (map 0F3A imm8, rip)", "c4e3790f0510000000ff", 10, 5, false},
		{"vzeroupper", "c5f877", 3, -1, false},
		{"vzeroupper followed by more bytes", "c5f877e900000000", 3, -1, false},
		{"fs: vmovdqu", "64c5fe6f00", 5, -1, false},
		{"EVEX vmovdqu64 zmm0, [rip+x]", "62f1fe486f0510000000", 10, 6, false},
		{"EVEX vpaddd disp8*N", "62f17548fe4001", 7, -1, false},
		{"EVEX vpternlogd (map 0F3A imm8)", "62f3754825c2ff", 7, -1, false},
		{"67 rip: eip-relative", "67c5fe6f0510000000", 0, 0, true},
		{"66 before VEX", "66c5fe6f00", 0, 0, true},
		{"VEX map 4", "c4e47d5a00", 0, 0, true},
		{"EVEX bad fixed bit", "62f1fa486f00", 0, 0, true},
		{"truncated", "c5fe6f05100000", 0, 0, true},
	}
	for _, tt := range tests {
		v, err := decodeVEX(unhex(t, tt.code))
		if tt.err {
			if err == nil || errors.Is(err, errNotVEX) {
				t.Errorf("%s: decodeVEX = %+v, %v; want an error", tt.name, v, err)
			}
			continue
		}
		if err != nil || v.len != tt.len || v.ripOff != tt.ripOff {
			t.Errorf("%s: decodeVEX = %+v, %v; want len %d ripOff %d", tt.name, v, err, tt.len, tt.ripOff)
		}
	}
	for _, code := range []string{"55", "4889e5", "f30f1efa", "e800000000", "66904890"} {
		if _, err := decodeVEX(unhex(t, code)); !errors.Is(err, errNotVEX) {
			t.Errorf("decodeVEX(%s) = %v, want errNotVEX", code, err)
		}
	}
}
