package render_test

import (
	"strings"
	"testing"

	"github.com/profile-dev/profile/internal/golden"
	"github.com/profile-dev/profile/model/modeltest"
	"github.com/profile-dev/profile/render"
)

// With CPU samples, busy times are the samples' (modeltest.CPUSampled,
// 260ns sampled of 1.45µs traced): the waiting call read keeps its CPU
// time and takes the heat colours, usleep has none, the counted hash
// shows its sampled time, and the title says how the samples were taken
// and what was blocked. --scope wall draws the measured times.
func TestCPUSampled(t *testing.T) {
	dot := mustDOT(t, modeltest.CPUSampled(), render.Options{Threads: true})
	golden.Check(t, "cpu-sampled.dot", dot)
	for name, want := range map[string]string{
		"libc.so.6:read":   `read\nself 20ns (7.69%)\ntotal 20ns (7.69%)\n1 call", fillcolor=`,
		"libc.so.6:usleep": `usleep\nself 0ns (0.00%)\ntotal 0ns (0.00%)\n1 call", fillcolor="#fff7ec"`,
		"hash":             `hash\nself 60ns (23.08%)\ntotal 60ns (23.08%)\n11 calls", fillcolor="#d7301f"`,
		"main [L0]":        `main [L0]\nself 40ns (15.38%)\ntotal 160ns (61.54%)\n1 call"`,
	} {
		if l := nodeLine(t, dot, name); !strings.Contains(l, want) || strings.Contains(l, "#c6d4e1") {
			t.Errorf("%s: %s\nwant %s, not blue-grey", name, l, want)
		}
	}
	for _, want := range []string{
		`/bin/app: traced 1.45µs in 2 threads\nbusy time 260ns, sampled: 26 samples every 10ns (kernel too) — 3.70% in the probes' code; 800ns blocked in waiting calls left out`,
		`self 20ns, total 20ns: sampled CPU time`,
		`threads: T: (calls, total, %) per thread, sampled CPU time`,
	} {
		if !strings.Contains(string(dot), want) {
			t.Errorf("no %q in\n%s", want, dot)
		}
	}
	if strings.Contains(string(dot), `"waiting"`) {
		t.Error("a waiting swatch in the legend: nothing is waiting")
	}
	wall := mustDOT(t, modeltest.CPUSampled(), render.Options{Wall: true})
	for name, want := range map[string]string{
		"libc.so.6:read": `read\nself 500ns (34.53%)\ntotal 500ns (34.53%)\n1 call", fillcolor="#c6d4e1"`,
		"hash":           `hash\nself 0ns (0.00%)\ntotal 0ns (0.00%)\n11 calls"`,
	} {
		if l := nodeLine(t, wall, name); !strings.Contains(l, want) {
			t.Errorf("wall %s: %s\nwant %s", name, l, want)
		}
	}
	if !strings.Contains(string(wall), `traced 1.45µs in 2 threads\nwall time, 800ns of it waiting (blue-grey)`) {
		t.Errorf("the wall drawing's title:\n%s", wall)
	}
}
