package flame_test

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/profile-dev/profile/export"
	"github.com/profile-dev/profile/flame"
	"github.com/profile-dev/profile/internal/golden"
	"github.com/profile-dev/profile/model"
	"github.com/profile-dev/profile/model/modeltest"
)

func TestGolden(t *testing.T) {
	for _, c := range []struct {
		file, profile string
		opt           flame.Options
	}{
		{"sample.svg", "sample", flame.Options{}},
		{"sample-threads.svg", "sample", flame.Options{Threads: true, Title: "threads <&> \"all\""}},
		{"sample-calls.svg", "sample", flame.Options{Value: export.Calls}},
		{"pruned.svg", "pruned", flame.Options{}},
	} {
		t.Run(c.file, func(t *testing.T) {
			svg, _ := render(t, profiles[c.profile](t), c.opt)
			golden.Check(t, c.file, svg)
		})
	}
}

// Every frame's width is its value, summed from the folded stacks of its
// path and everything below it as flamegraph.pl sums them, and its rect is
// that value at the graph's scale; callees lie side by side from their
// caller's left edge. Total widths equal self widths on these profiles.
func TestWidthsProportional(t *testing.T) {
	for name, mk := range profiles {
		for _, threads := range []bool{false, true} {
			for _, v := range []export.Value{export.Self, export.Calls, export.Total} {
				t.Run(fmt.Sprintf("%s/threads=%v/%s", name, threads, v), func(t *testing.T) {
					p := mk(t)
					_, doc := render(t, p, flame.Options{Value: v, Threads: threads})
					folded := v
					if v == export.Total {
						folded = export.Self
					}
					lines := export.Folded(p, export.Options{Value: folded, Threads: threads})
					want := map[string]int64{}
					var all int64
					for _, l := range lines {
						all += l.Value
						for i := 1; i <= len(l.Frames); i++ {
							want[strings.Join(l.Frames[:i], ";")] += l.Value
						}
					}
					if len(doc.Frames) != len(want)+1 {
						t.Errorf("%d frames, want %d paths and all", len(doc.Frames), len(want))
					}
					if doc.Frames[0].name() != "all" || doc.Frames[0].W != all {
						t.Fatalf("first frame %q width %d, want all %d", doc.Frames[0].name(), doc.Frames[0].W, all)
					}
					scale := float64(doc.Width-20) / float64(all)
					next := map[int]int64{} // the left edge of the next frame, by depth
					for _, f := range doc.Frames {
						if f.D > 0 && f.W != want[strings.Join(f.path, ";")] {
							t.Errorf("%v: width %d, want %d", f.path, f.W, want[strings.Join(f.path, ";")])
						}
						if f.D > 0 && f.X != next[f.D] {
							t.Errorf("%v: at %d, want %d", f.path, f.X, next[f.D])
						}
						next[f.D] = f.X + f.W
						next[f.D+1] = f.X
						if math.Abs(f.Rect.Width-float64(f.W)*scale) > 0.006 || math.Abs(f.Rect.X-10-float64(f.X)*scale) > 0.006 {
							t.Errorf("%v: rect x %.2f width %.2f, want %.2f %.2f", f.path, f.Rect.X, f.Rect.Width,
								10+float64(f.X)*scale, float64(f.W)*scale)
						}
					}
				})
			}
		}
	}
}

// Sample's threads 101 and 102 both run worker;compute: one frame without
// --threads, one per thread with it.
func TestThreadsApart(t *testing.T) {
	count := func(doc svgDoc, path string) (n int, w int64) {
		for _, f := range doc.Frames {
			if strings.HasSuffix(strings.Join(f.path, ";"), path) {
				n++
				w += f.W
			}
		}
		return n, w
	}
	_, merged := render(t, modeltest.Sample(), flame.Options{Value: export.Calls})
	if n, w := count(merged, "worker;compute"); n != 1 || w != 2 {
		t.Errorf("merged: %d worker;compute frames, %d calls; want 1, 2", n, w)
	}
	_, apart := render(t, modeltest.Sample(), flame.Options{Value: export.Calls, Threads: true})
	if n, w := count(apart, "worker;compute"); n != 2 || w != 2 {
		t.Errorf("threads: %d worker;compute frames, %d calls; want 2, 2", n, w)
	}
	var tops []string
	for _, f := range apart.Frames {
		if f.D == 1 {
			tops = append(tops, f.name())
		}
	}
	if want := []string{"t100-100", "t101-101", "t102-102", "t200-200"}; !slices.Equal(tops, want) {
		t.Errorf("thread frames %v, want %v", tops, want)
	}
}

// A frame's tooltip carries its vector: calls, self, total with their
// shares of the traced time, its module and its share of the graph.
func TestHover(t *testing.T) {
	_, doc := render(t, modeltest.Sample(), flame.Options{})
	for _, want := range []string{
		"compute\nmodule app\ncalls 2, self 420ns (24.21%), total 420ns (24.21%)\nwidth 420ns, 24.21% of the graph",
		"fib\nmodule app\ncalls 1 (1 recursive), self 30ns (1.73%), total 0ns (0.00%)\nwidth 60ns, 3.46% of the graph",
		"libc.so.6:usleep\nmodule libc.so.6\ncalls 1, self 500ns (28.82%), total 500ns (28.82%)\nwidth 500ns, 28.82% of the graph",
		"START\ncalls 0, self 135ns (7.78%), total 0ns (0.00%)\nwidth 135ns, 7.78% of the graph",
	} {
		if !slices.ContainsFunc(doc.Frames, func(f svgFrame) bool { return f.Title == want }) {
			t.Errorf("no frame titled %q", want)
		}
	}
	_, doc = render(t, profiles["pruned"](t), flame.Options{})
	if !slices.ContainsFunc(doc.Frames, func(f svgFrame) bool {
		return f.Title == "[pruned]\nself 295ns (17.00%) of contexts removed by prune\nwidth 295ns, 17.00% of the graph" &&
			slices.Equal(f.path, []string{"START", "[pruned]"})
	}) {
		t.Error("no START;[pruned] frame of 295ns")
	}
}

// The executable's functions are warm, a library's cool, START grey; a
// function has one colour wherever it appears, in any profile.
func TestColorsByModule(t *testing.T) {
	fills := map[string]string{}
	for name, mk := range profiles {
		_, doc := render(t, mk(t), flame.Options{Threads: true})
		for _, f := range doc.Frames {
			var r, g, b int
			if _, err := fmt.Sscanf(f.Rect.Fill, "rgb(%d,%d,%d)", &r, &g, &b); err != nil {
				t.Fatalf("%s %v: fill %q", name, f.path, f.Rect.Fill)
			}
			n := f.name()
			switch {
			case f.D == 1: // a thread
				if f.Rect.Fill != "rgb(176,188,210)" {
					t.Errorf("%s %v: %s, want the threads' blue-grey", name, f.path, f.Rect.Fill)
				}
			case f.D == 0 || n == "START" || n == "[pruned]":
				if r != g || g != b {
					t.Errorf("%s %v: %s, want grey", name, f.path, f.Rect.Fill)
				}
			case strings.HasPrefix(n, "libc.so.6:"):
				if max(g, b) <= r {
					t.Errorf("%s %v: %s, want a cool colour", name, f.path, f.Rect.Fill)
				}
			default:
				if r < 205 || b > 55 {
					t.Errorf("%s %v: %s, want a warm colour", name, f.path, f.Rect.Fill)
				}
			}
			if f.D > 1 {
				if prev, ok := fills[n]; ok && prev != f.Rect.Fill {
					t.Errorf("%s: %s is %s here, %s elsewhere", name, n, f.Rect.Fill, prev)
				}
				fills[n] = f.Rect.Fill
			}
		}
	}
}

// Options.Color gets each function frame's path, root first, and replaces
// its module colour; the other frames keep theirs.
func TestColorHook(t *testing.T) {
	p := modeltest.Sample()
	var got [][]string
	opt := flame.Options{Color: func(path []int, fn int) string {
		var names []string
		for _, f := range path {
			names = append(names, p.FuncName(f))
		}
		if path[len(path)-1] != fn {
			t.Errorf("path %v does not end with %d", path, fn)
		}
		got = append(got, names)
		if p.FuncName(fn) == "compute" {
			return "red"
		}
		return "blue"
	}}
	_, doc := render(t, p, opt)
	for _, f := range doc.Frames {
		want := "blue"
		switch {
		case f.D == 0:
			want = "rgb(200,200,200)"
		case f.name() == "compute":
			want = "red"
		}
		if f.Rect.Fill != want {
			t.Errorf("%v: fill %s, want %s", f.path, f.Rect.Fill, want)
		}
	}
	if len(got) != len(doc.Frames)-1 || !slices.ContainsFunc(got, func(s []string) bool {
		return slices.Equal(s, []string{"main", "do_fork", "child_work", "fib", "fib"})
	}) {
		t.Errorf("Color called with paths %v", got)
	}
}

// Frames under 0.1 px are left out with their callees, and the subtitle
// counts them.
func TestElided(t *testing.T) {
	b := modeltest.NewBuilder("/bin/app")
	pr := b.Process(1, model.None, "", 0)
	script := []modeltest.Step{{Dt: 10_000_000, Func: "main"}, {Dt: 1, Func: "big"}, {Dt: 100_000_000}}
	for _, f := range []string{"tiny1", "tiny2", "tiny3"} {
		script = append(script, modeltest.Step{Dt: 1, Func: f}, modeltest.Step{Dt: 1, Func: "leaf"},
			modeltest.Step{Dt: 1}, modeltest.Step{Dt: 1})
	}
	script = append(script, modeltest.Step{Dt: 1})
	b.Thread(pr, 1, 0, "", 0, nil, script)
	_, doc := render(t, b.P, flame.Options{})
	if got := doc.text("subtitle"); !strings.HasSuffix(got, " · 6 frames narrower than 0.1 px left out") {
		t.Errorf("subtitle %q", got)
	}
	for _, f := range doc.Frames {
		if strings.HasPrefix(f.name(), "tiny") || f.name() == "leaf" {
			t.Errorf("%v drawn, %.4f px", f.path, f.Rect.Width)
		}
	}
	if len(doc.Frames) != 4 { // all, START, main, big
		t.Errorf("%d frames drawn, want 4", len(doc.Frames))
	}
}

// Any name stays text: XML's specials are escaped, control characters and
// invalid UTF-8 replaced, and the tooltip's first line is the whole name.
func TestEscape(t *testing.T) {
	names := []string{`operator<<(std::ostream&, char const*)`, `a"b'c`, "ctl\x01\x7f", "bad\xffutf8", "cdata]]>end"}
	b := modeltest.NewBuilder("/bin/a&b")
	pr := b.Process(1, model.None, "", 0)
	var script []modeltest.Step
	for _, n := range names {
		script = append(script, modeltest.Step{Dt: 1, Func: n}, modeltest.Step{Dt: 10})
	}
	b.Thread(pr, 1, 0, "", 0, nil, script)
	svg, doc := render(t, b.P, flame.Options{Title: "<title> & \"more\""})
	if doc.text("title") != `<title> & "more"` {
		t.Errorf("title %q", doc.text("title"))
	}
	if bytes.Count(svg, []byte("]]>")) != 1 { // only the script's CDATA ends
		t.Error("]]> in the SVG outside the script's end")
	}
	var got []string
	for _, f := range doc.Frames[1:] {
		got = append(got, f.name())
	}
	want := []string{"START", "a\"b'c", "bad\uFFFDutf8", "cdata]]>end", "ctl\uFFFD\x7f", "operator<<(std::ostream&, char const*)"}
	if !slices.Equal(got, want) {
		t.Errorf("frames %q, want %q", got, want)
	}
}

func TestNothingToDraw(t *testing.T) {
	p := model.New()
	_, doc := render(t, p, flame.Options{})
	if len(doc.Frames) != 0 || !strings.HasSuffix(doc.text("subtitle"), "· nothing to draw") {
		t.Errorf("%d frames, subtitle %q", len(doc.Frames), doc.text("subtitle"))
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestErrors(t *testing.T) {
	p := modeltest.Sample()
	for _, c := range []struct {
		w    interface{ Write([]byte) (int, error) }
		opt  flame.Options
		want string
	}{
		{&bytes.Buffer{}, flame.Options{Value: "wall"}, `unknown value "wall"`},
		{&bytes.Buffer{}, flame.Options{Width: 50}, "too narrow"},
		{failWriter{}, flame.Options{}, "disk full"},
	} {
		if err := flame.SVG(c.w, p, c.opt); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.opt, err, c.want)
		}
	}
}

// A profile imported from a sampling profiler says so, shows no call
// counts, and has no graph by calls.
func TestSampled(t *testing.T) {
	p := modeltest.Sample()
	p.Meta.Sampling = &model.Sampling{Type: "cpu", Unit: "nanoseconds", PeriodType: "cpu", PeriodUnit: "nanoseconds", Period: 10_000_000}
	_, doc := render(t, p, flame.Options{})
	if got := doc.text("subtitle"); got != "widths by total time · sampled (cpu nanoseconds, 100 Hz), call counts unknown · 1.74µs in 4 threads" {
		t.Errorf("subtitle %q", got)
	}
	if !slices.ContainsFunc(doc.Frames, func(f svgFrame) bool {
		return f.Title == "compute\nmodule app\nself 420ns (24.21%), total 420ns (24.21%)\nwidth 420ns, 24.21% of the graph"
	}) {
		t.Error("no compute frame without calls")
	}
	err := flame.SVG(&bytes.Buffer{}, p, flame.Options{Value: export.Calls})
	if err == nil || !strings.Contains(err.Error(), "call counts unknown: draw it by total or self time") {
		t.Errorf("by calls: %v", err)
	}
}

func BenchmarkSVG(b *testing.B) {
	p := modeltest.Synthetic(1_000_000, 8, 1)
	var buf bytes.Buffer
	for b.Loop() {
		buf.Reset()
		if err := flame.SVG(&buf, p, flame.Options{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(buf.Len()), "bytes/svg")
}
