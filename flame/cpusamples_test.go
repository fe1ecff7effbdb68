package flame_test

import (
	"strings"
	"testing"

	"github.com/profile-dev/profile/flame"
	"github.com/profile-dev/profile/model/modeltest"
)

// A flame graph draws measured times: the contexts CPU samples alone made
// (the counted hash's) are no frames, neither drawn nor counted as left
// out.
func TestCPUSampledFrames(t *testing.T) {
	_, doc := render(t, modeltest.CPUSampled(), flame.Options{})
	if got := doc.text("subtitle"); strings.Contains(got, "left out") {
		t.Errorf("subtitle %q", got)
	}
	var names []string
	for _, f := range doc.Frames {
		names = append(names, f.name())
		if f.name() == "hash" {
			t.Errorf("%v drawn", f.path)
		}
	}
	if len(doc.Frames) != 12 { // all, START and the 10 measured contexts of thread 100 and 101 merged
		t.Errorf("%d frames drawn, want 12: %v", len(doc.Frames), names)
	}
}

// Busy, a flame graph draws the CPU samples' times: the counted hash's
// contexts, which the samples alone made, are frames (below main, at the
// top of thread 101 and below compute), and the graph is as wide as the
// 26 samples of 10ns; usleep, asleep, has no sample and no width.
func TestCPUSampledBusyFrames(t *testing.T) {
	_, doc := render(t, modeltest.CPUSampled(), flame.Options{Busy: true})
	widths := map[string]int64{}
	for _, f := range doc.Frames {
		widths[strings.Join(f.path, ";")] += f.W
	}
	want := map[string]int64{"": 260, "main;hash": 30, "hash": 10, "worker;compute;hash": 20, "main;libc.so.6:usleep": 0}
	for path, w := range want {
		if widths[path] != w {
			t.Errorf("%q is %d wide, want %d (%v)", path, widths[path], w, widths)
		}
	}
	if got := doc.text("subtitle"); !strings.Contains(got, "widths by busy total time (CPU samples)") {
		t.Errorf("subtitle %q", got)
	}
}

// Busy, a profile without samples draws its measured times less the time
// blocked in waiting calls: main's usleep (500ns) has no width, and the
// graph is as wide as the busy traced time.
func TestMeasuredBusyFrames(t *testing.T) {
	p := modeltest.Sample()
	var busy int64
	for _, th := range p.Busy().Threads {
		busy += th.TracedNs
	}
	_, wall := render(t, p, flame.Options{})
	_, doc := render(t, p, flame.Options{Busy: true})
	widths := map[string]int64{}
	for _, f := range doc.Frames {
		widths[strings.Join(f.path, ";")] += f.W
	}
	if widths[""] != busy || widths["main;libc.so.6:usleep"] != 0 || wall.Frames[0].W != busy+500 {
		t.Errorf("all %d wide (busy %d, wall %d), usleep %d", widths[""], busy, wall.Frames[0].W, widths["main;libc.so.6:usleep"])
	}
	if got := doc.text("subtitle"); !strings.Contains(got, "widths by busy total time (waiting calls left out)") {
		t.Errorf("subtitle %q", got)
	}
}
