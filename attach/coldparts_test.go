package attach

import (
	"testing"

	"github.com/profile-dev/profile/instrument"
	"github.com/profile-dev/profile/internal/workload"
)

// Functions that jump into parts GCC split off them ("f.cold") and back:
// counts exact under every probe kind, and with exit probes parse and
// check (one part calls rare and jumps back, the other calls abort, which
// never returns) keep their returns unhijacked: their parts are found by
// their symbols in coldparts and by their call-frame information alone in
// coldparts-dynamic.
func TestColdParts(t *testing.T) {
	want, err := workload.LoadExpected("coldparts")
	if err != nil {
		t.Fatal(err)
	}
	wantOut, _ := untraced(t, "coldparts")
	for _, bin := range []string{"coldparts", "coldparts-dynamic"} {
		t.Run(bin, func(t *testing.T) {
			forEachProbe(t, func(t *testing.T, opt Options) {
				r, out := recordWorkload(t, bin, opt)
				compareExpected(t, want, r.Profile)
				if out != wantOut {
					t.Errorf("stdout %q, untraced %q", out, wantOut)
				}
				if opt.Probes != ProbesInline || opt.hijackOnly {
					return
				}
				if opt.Filter, err = instrument.NewFilter([]string{"^" + bin + ":(parse|check)$"}, nil, nil); err != nil {
					t.Fatal(err)
				}
				r, _ = recordWorkload(t, bin, opt)
				if got := observe(r.Profile).Functions; got["parse"] != want.Functions["parse"] || got["check"] != want.Functions["check"] {
					t.Errorf("parse and check alone: %v", got)
				}
				if r.Stats.Probes.Exits != 2 {
					t.Errorf("%d functions with exit probes, want parse and check", r.Stats.Probes.Exits)
				}
			})
		})
	}
}
