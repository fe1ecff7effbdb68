package cmd_test

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// discoverDoc is what the tests read of discover --format json.
type discoverDoc struct {
	Format   string       `json:"format"`
	Function string       `json:"function"`
	Depth    int          `json:"depth"`
	Profile  string       `json:"profile"`
	Warnings []string     `json:"warnings"`
	Root     discoverNode `json:"root"`
}

type discoverNode struct {
	Level    int    `json:"level"`
	Kind     string `json:"kind"`
	Tail     bool   `json:"tail"`
	Function *struct {
		Key  string `json:"key"`
		Main bool   `json:"main"`
	} `json:"function"`
	Sites []struct {
		Offset uint64 `json:"offset"`
	} `json:"sites"`
	Operand  string `json:"operand"`
	Observed []struct {
		Function struct {
			Key string `json:"key"`
		} `json:"function"`
		Calls int64 `json:"calls"`
	} `json:"observed"`
	ObservedKnown  bool           `json:"observed_known"`
	ObservedShared bool           `json:"observed_shared"`
	Expanded       bool           `json:"expanded"`
	Repeat         bool           `json:"repeat"`
	Callees        []discoverNode `json:"callees"`
}

func discoverJSON(t *testing.T, dir string, args ...string) discoverDoc {
	t.Helper()
	out, stderr, code := run(t, dir, append([]string{"discover", "--format", "json"}, args...)...)
	if code != 0 || stderr != "" {
		t.Fatalf("discover %v: exit %d\n%s", args, code, stderr)
	}
	var doc discoverDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("discover %v: %v\n%s", args, err, out)
	}
	return doc
}

// The acceptance of issue #13's discovery: C calls x and y directly, puts
// through the PLT (resolved to the C library), and has one indirect site,
// whose target a recorded run names: z, 50 times.
func TestDiscoverCallees(t *testing.T) {
	dir := t.TempDir()
	exe := wl(t, "callees")
	record(t, dir, "run.data", "callees")
	doc := discoverJSON(t, dir, "--exe", exe, "C", "--profile", "run.data")
	if doc.Format != "profile-discover/1" || doc.Function != "C" || doc.Depth != 1 || doc.Profile != "run.data" || len(doc.Warnings) != 0 {
		t.Errorf("document: %+v", doc)
	}
	root := doc.Root
	if root.Function == nil || root.Function.Key != "callees:C" || !root.Function.Main || !root.Expanded {
		t.Fatalf("root: %+v", root)
	}
	var got []string
	for _, c := range root.Callees {
		s := c.Kind
		if c.Function != nil {
			s += " " + c.Function.Key
		}
		if c.Level != 1 || c.Tail || len(c.Sites) == 0 {
			t.Errorf("%s: level %d, tail %v, sites %v", s, c.Level, c.Tail, c.Sites)
		}
		if c.Kind == "indirect" {
			if !c.ObservedKnown || c.ObservedShared || c.Operand == "" {
				t.Errorf("indirect site: %+v", c)
			}
			for _, o := range c.Observed {
				s += " observed " + o.Function.Key + " " + strconv.FormatInt(o.Calls, 10)
			}
		}
		got = append(got, s)
	}
	want := []string{"direct callees:x", "direct callees:y", "indirect observed callees:z 50", "plt libc.so.6:puts"}
	if !slices.Equal(got, want) {
		t.Errorf("callees of C:\n got %q\nwant %q", got, want)
	}

	// The text: one row per callee, the observed target beside its site.
	out, stderr, code := run(t, dir, "discover", "--exe", exe, "C", "--profile", "run.data")
	if code != 0 || stderr != "" {
		t.Fatalf("discover: exit %d: %s", code, stderr)
	}
	for _, w := range []string{"C in callees at ", "depth 1: 3 functions, 1 indirect call site", "observed: z ×50", "libc.so.6:puts  plt"} {
		if !strings.Contains(out, w) {
			t.Errorf("text lacks %q:\n%s", w, out)
		}
	}

	// Depth 2: y's call of x is marked, not expanded again.
	doc = discoverJSON(t, dir, "--exe", exe, "callees:C", "--depth", "2")
	for _, c := range doc.Root.Callees {
		if c.Function != nil && c.Function.Key == "callees:y" {
			if len(c.Callees) != 1 || c.Callees[0].Function.Key != "callees:x" || !c.Callees[0].Repeat || c.Callees[0].Level != 2 {
				t.Errorf("y at depth 2: %+v", c.Callees)
			}
		}
	}
}

// discover --pid reads a running process's files: the rate workload's
// tick calls hot and light.
func TestDiscoverPid(t *testing.T) {
	cmd, lines := rateTarget(t)
	for deadline := time.Now().Add(10 * time.Second); len(lines()) == 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("rate never reported: not running")
		}
	}
	doc := discoverJSON(t, t.TempDir(), "--pid", strconv.Itoa(cmd.Process.Pid), "tick")
	var keys []string
	for _, c := range doc.Root.Callees {
		if c.Function != nil {
			keys = append(keys, c.Function.Key)
		}
	}
	if doc.Root.Function.Key != "rate:tick" || !slices.Equal(keys, []string{"rate:hot", "rate:light"}) {
		t.Errorf("discover --pid tick: root %s, callees %v", doc.Root.Function.Key, keys)
	}
}

// statsTail is what --stats prints between the ring events and the
// context on a run with nothing dropped or stalled.
const statsTail = "ring stalls:         0 (0s waiting)\nevents dropped:      0\ncalls not traced:    0 (threads without a ring)\n" +
	"frames left in code: 0 (returning into the inline probes' code at detach)\n"

// record --expand traces what discover lists, on top of the filter, with
// exact counts: C's callees x (50 from C, 100 from y) and y (100) and the
// C library's puts (50), not z (an indirect site's target), and says so
// on stderr and in the profile's filters.
func TestExpandRecord(t *testing.T) {
	dir := t.TempDir()
	exe := wl(t, "callees")
	for _, c := range []struct {
		name  string
		args  []string
		want  map[string]int64 // module:function -> calls; every function traced
		line  string
		stats string // in --stats
	}{
		{"C", []string{"--expand", "C", "--filter", "^callees:(main|A|B|C|D)$"},
			map[string]int64{"callees:main": 1, "callees:A": 10, "callees:B": 10, "callees:C": 50, "callees:D": 10,
				"callees:x": 150, "callees:y": 100, "libc.so.6:puts": 50},
			"profile: --expand C: tracing C, x, y, libc.so.6:puts (depth 1); indirect call sites not followed: 1", ""},
		{"C trap", []string{"--expand", "C", "--filter", "^callees:(main|A|B|C|D)$", "--probes", "trap"},
			map[string]int64{"callees:main": 1, "callees:A": 10, "callees:B": 10, "callees:C": 50, "callees:D": 10,
				"callees:x": 150, "callees:y": 100, "libc.so.6:puts": 50},
			"profile: --expand C: tracing C, x, y, libc.so.6:puts (depth 1)", ""},
		// --context A>B: C's callees only under A>B (x 20 + 40 from y,
		// y 40, puts 20); outside it no event (inline) and no stop (trap).
		{"C in A>B", []string{"--expand", "C", "--filter", "^callees:(main|C|D)$", "--context", "A>B", "--stats", "--probes", "inline", "--sample", "0"},
			map[string]int64{"callees:main": 1, "callees:A": 10, "callees:B": 10, "callees:C": 50, "callees:D": 10,
				"callees:x": 60, "callees:y": 40, "libc.so.6:puts": 20},
			"profile: --expand C: tracing C, x, y, libc.so.6:puts (depth 1), its callees only under A>B",
			"ring events:         402\n" + statsTail + "context:             A>B\n  calls outside it:  180 let go by inline probes (no event)\n  stops outside it:  0 at trap probes\n"},
		{"C in A>B trap", []string{"--expand", "C", "--filter", "^callees:(main|C|D)$", "--context", "A>B", "--stats", "--probes", "trap"},
			map[string]int64{"callees:main": 1, "callees:A": 10, "callees:B": 10, "callees:C": 50, "callees:D": 10,
				"callees:x": 60, "callees:y": 40, "libc.so.6:puts": 20},
			"profile: --expand C: tracing C, x, y, libc.so.6:puts (depth 1), its callees only under A>B",
			"context:             A>B\n  calls outside it:  0 let go by inline probes (no event)\n  stops outside it:  0 at trap probes\n"},
		{"A depth 2", []string{"--expand", "A", "--depth", "2", "--filter", "^callees:main$"},
			map[string]int64{"callees:main": 1, "callees:A": 10, "callees:B": 10, "callees:C": 50},
			"profile: --expand A: tracing A, B, C (depth 2)\n", ""},
		{"two", []string{"--expand", "B", "--expand", "callees:D", "--filter", "^callees:main$", "--exclude", ":D$"},
			map[string]int64{"callees:main": 1, "callees:B": 10, "callees:C": 50},
			"profile: --expand callees:D: tracing D, C (depth 1)\n", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"record", "-o", "e.data"}, c.args...)
			_, stderr, code := run(t, dir, append(args, "--", exe)...)
			if !strings.Contains(stderr, c.stats) {
				t.Errorf("--stats lacks %q:\n%s", c.stats, stderr)
			}
			if code != 0 || !strings.Contains(stderr, c.line) {
				t.Fatalf("record %v: exit %d, stderr lacks %q:\n%s", c.args, code, c.line, stderr)
			}
			var s struct {
				Functions []struct {
					Name   string `json:"name"`
					Module string `json:"module"`
					Calls  int64  `json:"calls"`
				} `json:"functions"`
			}
			decodeSummary(t, dir, &s, "e.data")
			got := map[string]int64{}
			for _, f := range s.Functions {
				if f.Name != "START" {
					got[f.Module+":"+f.Name] = f.Calls
				}
			}
			if !maps.Equal(got, c.want) {
				t.Errorf("calls %v, want %v", got, c.want)
			}
			info, _, _ := run(t, dir, "info", "e.data")
			if !strings.Contains(info, "--expand "+c.args[1]+" --depth ") {
				t.Errorf("info's filters do not say what was expanded:\n%s", info)
			}
		})
	}
}
