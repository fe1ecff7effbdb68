package main

import (
	"math"
	"strings"
	"testing"
)

func TestInnermostIn(t *testing.T) {
	const exe = "/tmp/luadriver"
	script := ` 9946 
	           12cbe _dl_cache_libcmp (/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2)
	           1ab77 _start (/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2)

 9946 
	           183c0 luaV_execute (/tmp/luadriver)
	            b2ff luaD_callnoyield (/tmp/luadriver)
	            5770 _start (/tmp/luadriver)

 9946 
	ffffffff8100 entry_SYSCALL_64 ([kernel.kallsyms])
	           9a1c0 __memmove_avx_unaligned_erms (/usr/lib/x86_64-linux-gnu/libc.so.6)
	            c0ff luaH_resize (/tmp/luadriver)
	           183c0 luaV_execute (/tmp/luadriver)

 9946 
	           183ef luaV_execute (/tmp/luadriver)
`
	counts, n := innermostIn(strings.NewReader(script), exe)
	if n != 3 || counts["luaV_execute"] != 2 || counts["luaH_resize"] != 1 || len(counts) != 2 {
		t.Fatalf("%d samples %v, want 3: luaV_execute 2, luaH_resize 1 (the ld.so sample left out)", n, counts)
	}
}

func TestTVD(t *testing.T) {
	for _, tc := range []struct {
		a, b map[string]float64
		want float64
	}{
		{map[string]float64{"f": 1}, map[string]float64{"f": 1}, 0},
		{map[string]float64{"f": 1}, map[string]float64{"g": 1}, 100},
		{map[string]float64{"f": 0.5, "g": 0.5}, map[string]float64{"f": 0.7, "h": 0.3}, 50},
	} {
		if got := tvd(tc.a, tc.b); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("tvd(%v, %v) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}
