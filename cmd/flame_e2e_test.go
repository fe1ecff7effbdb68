package cmd_test

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"regexp"
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
		{[]string{"--flame", "--tid", "1"}, "--tid is for the call graph, not --flame"},
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
