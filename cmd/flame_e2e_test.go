package cmd_test

import (
	"encoding/xml"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// A recorded demo drawn with render --flame: the SVG goes to
// demo.flame.svg beside the call graph's demo.svg, parses, and its root
// frame is as wide as the traced time (or, by calls, the number of calls)
// summary reports; --threads gives each of the 4 threads its frame.
func TestRenderFlameRecordedDemo(t *testing.T) {
	dir := t.TempDir()
	record(t, dir, "demo.data", "demo")
	var s struct {
		Totals struct {
			Calls    int64 `json:"calls"`
			Threads  int   `json:"threads"`
			TracedNs int64 `json:"traced_ns"`
		} `json:"totals"`
		Threads []struct {
			Tid  int    `json:"tid"`
			Name string `json:"name"`
		} `json:"threads"`
	}
	var busy struct {
		Totals struct {
			TracedNs int64 `json:"traced_ns"`
		} `json:"totals"`
	}
	decodeSummary(t, dir, &s, "demo.data", "--scope", "wall")
	decodeSummary(t, dir, &busy, "demo.data") // busy, the flame graph's default as summary's

	if _, stderr, code := run(t, dir, "render", "demo.data"); code != 0 {
		t.Fatalf("render: %s", stderr)
	}
	_, stderr, code := run(t, dir, "render", "--flame", "demo.data")
	if code != 0 || stderr != "profile: wrote demo.flame.svg\n" {
		t.Fatalf("render --flame: status %d, %q", code, stderr)
	}
	callGraph, err := os.ReadFile(filepath.Join(dir, "demo.svg"))
	if err != nil {
		t.Fatal(err)
	}
	svg, err := os.ReadFile(filepath.Join(dir, "demo.flame.svg"))
	if err != nil {
		t.Fatal(err)
	}
	if string(svg) == string(callGraph) {
		t.Fatal("the flame graph overwrote the call graph")
	}

	root := regexp.MustCompile(`<title>all\n`)
	frame := regexp.MustCompile(`<g class="f" id="f\d+" data-x="\d+" data-w="(\d+)" data-d="(\d+)"><title>([^\n]*)\n`)
	check := func(what, svg string, wantAll int64) (top []string) {
		t.Helper()
		if err := xml.Unmarshal([]byte(svg), new(struct{})); err != nil {
			t.Fatalf("%s: not XML: %v", what, err)
		}
		if !root.MatchString(svg) || !strings.Contains(svg, "<script") {
			t.Fatalf("%s: no all frame or no script", what)
		}
		for _, m := range frame.FindAllStringSubmatch(svg, -1) {
			switch m[2] {
			case "0":
				if m[1] != strconv.FormatInt(wantAll, 10) {
					t.Errorf("%s: all is %s wide, want %d", what, m[1], wantAll)
				}
			case "1":
				top = append(top, m[3])
			}
		}
		return top
	}
	top := check("by total", string(svg), busy.Totals.TracedNs)
	if !strings.Contains(strings.Join(top, ","), "serve_loop") {
		t.Errorf("by total: top frames %v, no serve_loop", top)
	}
	wall, stderr, code := run(t, dir, "render", "--flame", "demo.data", "--scope", "wall", "-o", "-")
	if code != 0 {
		t.Fatalf("render --flame --scope wall: %s", stderr)
	}
	check("wall", wall, s.Totals.TracedNs)
	if busy.Totals.TracedNs >= s.Totals.TracedNs || !strings.Contains(wall, "widths by wall total time") ||
		!strings.Contains(string(svg), "widths by busy total time") {
		t.Errorf("busy %d ns, wall %d ns: want busy time the less, and each subtitle saying which", busy.Totals.TracedNs, s.Totals.TracedNs)
	}

	byCalls, stderr, code := run(t, dir, "render", "--flame", "demo.data", "--value", "calls", "--threads",
		"--title", "demo <by calls>", "-o", "-")
	if code != 0 {
		t.Fatalf("render --flame --value calls --threads: %s", stderr)
	}
	threads := check("by calls", byCalls, s.Totals.Calls)
	var want []string
	for _, th := range s.Threads {
		want = append(want, th.Name+"-"+strconv.Itoa(th.Tid))
	}
	if len(threads) != s.Totals.Threads || strings.Join(threads, ",") != strings.Join(want, ",") {
		t.Errorf("thread frames %v, want %v", threads, want)
	}
	if !strings.Contains(byCalls, `<text id="title" x="600" y="24">demo &lt;by calls&gt;</text>`) {
		t.Error("--title not in the graph")
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--flame", "--png"}, "none of the others can be"},
		{[]string{"--flame", "--hot", "20%"}, "--hot is for the call graph, not --flame"},
		{[]string{"--flame", "--tid", "1"}, "no thread 1 in the profile"},
		{[]string{"--flame", "--tid", "-1"}, "bad --tid -1: must not be negative"},
		{[]string{"--flame", "--pid", "1"}, "no process 1 in the profile"},
		{[]string{"--flame", "--scope", "idle"}, `bad --scope "idle": give busy or wall`},
		{[]string{"--flame", "--value", "wall"}, `bad --value: unknown value "wall"`},
		{[]string{"--value", "self"}, "--value is for --flame"},
	} {
		_, stderr, code := run(t, dir, append([]string{"render", "demo.data"}, c.args...)...)
		if code != 2 {
			t.Errorf("%v: status %d, want 2", c.args, code)
		}
		oneLineError(t, stderr, code, c.want)
	}
}

// flameFrame is a frame of a written flame graph: its path of names from
// the frame above "all" ("" for all) and its width.
type flameFrame struct {
	path  string
	width int64
}

// flameFrames reads the frames of a flame graph in the order written
// (preorder), with their paths.
func flameFrames(t *testing.T, svg string) []flameFrame {
	t.Helper()
	if err := xml.Unmarshal([]byte(svg), new(struct{})); err != nil {
		t.Fatalf("not XML: %v", err)
	}
	re := regexp.MustCompile(`<g class="f" id="f\d+" data-x="\d+" data-w="(\d+)" data-d="(\d+)"(?: data-n="[^"]*")?><title>([^\n]*)\n`)
	var out []flameFrame
	var stack []string
	for _, m := range re.FindAllStringSubmatch(svg, -1) {
		w, _ := strconv.ParseInt(m[1], 10, 64)
		d, _ := strconv.Atoi(m[2])
		if d > len(stack) {
			t.Fatalf("frame %s at depth %d after depth %d", m[3], d, len(stack)-1)
		}
		stack = append(stack[:d], m[3])
		out = append(out, flameFrame{strings.Join(stack[1:], ";"), w})
	}
	return out
}

// subtitleEnds is whether svg's subtitle says what s does, last or before
// the note on frames too narrow to draw (a busy graph may have some).
func subtitleEnds(svg, s string) bool {
	return strings.Contains(svg, s+"</text>") || strings.Contains(svg, s+" · ")
}

// A recorded threads run drawn for one thread (render --flame --tid) holds
// exactly that thread's calls: each function's calls in its frames are
// summary --tid's for it (worker 3 on a level-2 thread, 2 on a level-1
// one, as threads.c makes them), no other thread's function is drawn, and
// the busy widths add up to the thread's busy time. --pid draws the
// process, and a tid or pid the profile lacks is a usage error.
func TestRenderFlameOneThread(t *testing.T) {
	dir := t.TempDir()
	record(t, dir, "threads.data", "threads")
	var whole struct {
		Meta struct {
			Pid int `json:"pid"`
		} `json:"meta"`
		Totals struct {
			TracedNs int64 `json:"traced_ns"`
			Threads  int   `json:"threads"`
		} `json:"totals"`
	}
	decodeSummary(t, dir, &whole, "threads.data")
	for _, c := range []struct {
		spawnedBy, root string
		workers         int64
		others          []string // other threads' functions
	}{
		{"spawn_level2", "level2_thread", 3, []string{"main", "spawn_level1", "level1_thread", "spawn_level2"}},
		{"spawn_level1", "level1_thread", 2, []string{"main", "spawn_level1", "level2_thread", "sync_point"}},
	} {
		tid := spawnedBy(t, dir, "threads.data", c.spawnedBy)
		var one struct {
			Totals struct {
				Calls    int64 `json:"calls"`
				TracedNs int64 `json:"traced_ns"`
			} `json:"totals"`
			Functions []struct {
				Name   string `json:"name"`
				Module string `json:"module"`
				Calls  int64  `json:"calls"`
			} `json:"functions"`
		}
		decodeSummary(t, dir, &one, "threads.data", "--tid", strconv.Itoa(tid))
		want := map[string]int64{}
		for _, f := range one.Functions {
			if f.Calls > 0 {
				name := f.Name
				if f.Module != "threads" {
					name = f.Module + ":" + name // the flame graph's name of a library's function
				}
				want[name] = f.Calls
			}
		}
		if want[c.root] != 1 || want["worker"] != c.workers {
			t.Fatalf("tid %d: summary's calls %v, want 1 %s and %d worker", tid, want, c.root, c.workers)
		}

		byCalls, stderr, code := run(t, dir, "render", "--flame", "--scope", "busy", "--tid", strconv.Itoa(tid),
			"--value", "calls", "threads.data", "-o", "-")
		if code != 0 {
			t.Fatalf("render --flame --tid %d: %s", tid, stderr)
		}
		if !strings.Contains(byCalls, "widths by calls · traced ") || !subtitleEnds(byCalls, fmt.Sprintf(" in 1 thread (tid %d)", tid)) {
			t.Errorf("tid %d: the subtitle does not name the thread", tid)
		}
		// A frame's own calls are its width less its callees'.
		frames := flameFrames(t, byCalls)
		got := map[string]int64{}
		for i, f := range frames[1:] {
			own := f.width
			for _, g := range frames[i+2:] {
				if strings.HasPrefix(g.path, f.path+";") && !strings.Contains(g.path[len(f.path)+1:], ";") {
					own -= g.width
				}
			}
			name := f.path[strings.LastIndex(f.path, ";")+1:]
			if own != 0 {
				got[name] += own
			}
		}
		if frames[0].width != one.Totals.Calls || !maps.Equal(got, want) {
			t.Errorf("tid %d: all %d calls, functions %v; want %d calls, %v", tid, frames[0].width, got, one.Totals.Calls, want)
		}
		if !slices.ContainsFunc(frames, func(f flameFrame) bool { return f.path == c.root+";worker" && f.width == c.workers }) {
			t.Errorf("tid %d: no frame %s;worker %d calls wide", tid, c.root, c.workers)
		}
		for _, f := range frames {
			for _, o := range c.others {
				if slices.Contains(strings.Split(f.path, ";"), o) {
					t.Errorf("tid %d: another thread's %s in frame %s", tid, o, f.path)
				}
			}
		}

		busy, stderr, code := run(t, dir, "render", "--flame", "--tid", strconv.Itoa(tid), "threads.data", "-o", "-")
		if code != 0 {
			t.Fatalf("render --flame --tid %d by time: %s", tid, stderr)
		}
		if all := flameFrames(t, busy)[0].width; all != one.Totals.TracedNs {
			t.Errorf("tid %d: all is %d ns wide, want the thread's busy %d ns", tid, all, one.Totals.TracedNs)
		}
	}

	pid := strconv.Itoa(whole.Meta.Pid)
	proc, stderr, code := run(t, dir, "render", "--flame", "--pid", pid, "threads.data", "-o", "-")
	if code != 0 {
		t.Fatalf("render --flame --pid %s: %s", pid, stderr)
	}
	if all := flameFrames(t, proc)[0].width; all != whole.Totals.TracedNs ||
		!subtitleEnds(proc, fmt.Sprintf(" in %d threads (pid %s)", whole.Totals.Threads, pid)) {
		t.Errorf("--pid %s: all %d ns wide, want %d, and a subtitle naming the process", pid, all, whole.Totals.TracedNs)
	}
	_, stderr, code = run(t, dir, "render", "--flame", "--pid", pid, "--tid", "1", "threads.data")
	if code != 2 {
		t.Errorf("--pid %s --tid 1: status %d, want 2", pid, code)
	}
	oneLineError(t, stderr, code, fmt.Sprintf("no thread 1 in process %s in the profile", pid))
}
