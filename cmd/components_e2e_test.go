package cmd_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/profile-dev/profile/internal/workload"
	"github.com/profile-dev/profile/model"
	"github.com/profile-dev/profile/model/modeltest"
)

type componentsDoc struct {
	Mode       string `json:"mode"`
	Times      string `json:"times"`
	TracedNs   int64  `json:"traced_ns"`
	Components []struct {
		Name      string `json:"name"`
		Calls     int64  `json:"calls"`
		SelfNs    int64  `json:"self_ns"`
		DroppedNs int64  `json:"dropped_ns"`
		TotalNs   int64  `json:"total_ns"`
	} `json:"components"`
	Tree componentNode `json:"tree"`
}

type componentNode struct {
	Name     string          `json:"name"`
	Calls    int64           `json:"calls"`
	TotalNs  int64           `json:"total_ns"`
	Children []componentNode `json:"children"`
}

func componentsJSON(t *testing.T, dir string, args ...string) componentsDoc {
	t.Helper()
	out, stderr, code := run(t, dir, append([]string{"components", "--format", "json"}, args...)...)
	if code != 0 {
		t.Fatalf("components %v: %s", args, stderr)
	}
	var d componentsDoc
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// A recording of demo split by testdata/components/demo.yaml: the calls
// into each component are the exact calls of its entry functions (the
// workload's expected.json), the tree has the paths demo.c's call
// structure gives, and the components' time adds up to the traced time.
// Without rules, the split is summary's modules table, to the nanosecond.
func TestComponentsRecordedDemo(t *testing.T) {
	dir := t.TempDir()
	record(t, dir, "demo.data", "demo")
	exp, err := workload.LoadExpected("demo")
	if err != nil {
		t.Fatal(err)
	}
	calls := func(fns ...string) (n int64) {
		for _, f := range fns {
			n += int64(exp.Functions[f].Calls)
		}
		return n
	}
	rules, err := filepath.Abs("../testdata/components/demo.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Totals struct {
			TracedNs int64 `json:"traced_ns"`
		} `json:"totals"`
		Modules []struct {
			Module string `json:"module"`
			SelfNs int64  `json:"self_ns"`
		} `json:"modules"`
	}
	decodeSummary(t, dir, &s, "demo.data", "--scope", "wall") // the wall time the others show

	d := componentsJSON(t, dir, "--rules", rules, "--scope", "wall", "demo.data")
	want := map[string]int64{
		"index":   calls("build_index"),
		"server":  calls("serve_loop"),
		"parser":  calls("parse_request"),
		"storage": calls("lookup"),
		"backend": calls("fetch_backend"),
		"render":  calls("render_response", "render_stats"),
	}
	var sum int64
	got := map[string]int64{}
	for _, c := range d.Components {
		got[c.Name] = c.Calls
		sum += c.SelfNs + c.DroppedNs
	}
	for name, n := range want {
		if got[name] != n {
			t.Errorf("calls into %s: %d, want %d (expected.json)", name, got[name], n)
		}
	}
	if len(got) != len(want)+2 { // and START, Other
		t.Errorf("components %v, want %v and START, Other", got, want)
	}
	if d.Mode != "rules" || d.TracedNs != s.Totals.TracedNs || sum != d.TracedNs || d.Tree.TotalNs != d.TracedNs {
		t.Errorf("mode %s, traced %d ns (summary %d), components add up to %d, tree total %d",
			d.Mode, d.TracedNs, s.Totals.TracedNs, sum, d.Tree.TotalNs)
	}
	// hierarchical: every path of the tree with its calls
	paths := map[string]int64{}
	var walk func(n componentNode, path string)
	walk = func(n componentNode, path string) {
		path += "/" + n.Name
		paths[path] = n.Calls
		for _, c := range n.Children {
			walk(c, path)
		}
	}
	walk(d.Tree, "")
	wantPaths := map[string]int64{
		"/START/server":                 want["server"],
		"/START/server/parser":          want["parser"],
		"/START/server/storage":         want["storage"],
		"/START/server/storage/backend": want["backend"],
		"/START/server/render":          want["render"],
		"/START/Other/index":            want["index"],
	}
	for path, n := range wantPaths {
		if c, ok := paths[path]; !ok || c != n {
			t.Errorf("tree path %s: %d calls (present %v), want %d", path, c, ok, n)
		}
	}
	if len(paths) != len(wantPaths)+2 { // and /START, /START/Other
		t.Errorf("tree paths %v, want %v and /START, /START/Other", paths, wantPaths)
	}

	// without rules: modules, with summary's self times
	m := componentsJSON(t, dir, "--scope", "wall", "demo.data")
	self := map[string]int64{}
	for _, c := range m.Components {
		self[c.Name] = c.SelfNs
		if c.Name == "demo" && c.Calls != calls("main", "serve_loop") {
			t.Errorf("calls into demo: %d, want main's and serve_loop's %d", c.Calls, calls("main", "serve_loop"))
		}
	}
	if len(s.Modules) < 2 || len(self) != len(s.Modules)+1 {
		t.Errorf("components %v, summary's modules %v", self, s.Modules)
	}
	for _, md := range s.Modules {
		if self[md.Module] != md.SelfNs {
			t.Errorf("module %s: self %d ns, summary %d ns", md.Module, self[md.Module], md.SelfNs)
		}
	}

	// the human formats and the drawing
	text, stderr, code := run(t, dir, "components", "--rules", rules, "demo.data")
	if code != 0 || !strings.Contains(text, "Component tree") || !strings.Contains(text, "      backend") {
		t.Errorf("components text (exit %d, %s):\n%s", code, stderr, text)
	}
	md, _, code := run(t, dir, "components", "--format", "markdown", "--rules", rules, "demo.data")
	if code != 0 || !strings.Contains(md, "| `START › server › storage › backend` | 7 |") {
		t.Errorf("components markdown (exit %d):\n%s", code, md)
	}
	if _, stderr, code := run(t, dir, "components", "--svg", "--rules", rules, "demo.data"); code != 0 ||
		!strings.Contains(stderr, "wrote demo.components.svg") {
		t.Fatalf("components --svg: exit %d: %s", code, stderr)
	}
	svg, err := os.ReadFile(filepath.Join(dir, "demo.components.svg"))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"<svg", "storage", "backend", "(7, "} {
		if !strings.Contains(string(svg), w) {
			t.Errorf("demo.components.svg has no %q", w)
		}
	}
}

func TestComponentsErrors(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "sample.data")
	if err := model.WriteFile(p, modeltest.Sample()); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "bad.yaml"), []byte("components:\n  - name: a\n    entry: ['(']\n"), 0o644)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"components", "--rules", "bad.yaml", p}, 1, "bad.yaml: component 1 (a): entry: error parsing regexp"},
		{[]string{"components", "--rules", "none.yaml", p}, 1, "--rules none.yaml: no such file"},
		{[]string{"components", "--format", "xml", p}, 2, `unknown --format "xml"`},
		{[]string{"components", "--format", "json", "--svg", p}, 2, "none of the others can be"},
		{[]string{"components", "none.data"}, 1, "none.data: no such file"},
		{[]string{"components", "--tid", "999", p}, 2, "no thread 999 in the profile"},
		{[]string{"components", "--pid", "-1", p}, 2, "bad --pid -1"},
	} {
		_, stderr, code := run(t, dir, c.args...)
		if code != c.code {
			t.Errorf("%v: exit %d, want %d (%s)", c.args, code, c.code, stderr)
		}
		oneLineError(t, stderr, code, c.want)
	}
}

// components --tid splits one thread: its components' time adds up to
// that thread's traced time (modeltest.Sample's thread 101).
func TestComponentsOneThread(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "sample.data")
	sample := modeltest.Sample()
	if err := model.WriteFile(p, sample); err != nil {
		t.Fatal(err)
	}
	var want int64
	for _, th := range sample.Threads {
		if th.Tid == 101 {
			want = th.TracedNs
		}
	}
	d := componentsJSON(t, dir, "--tid", "101", p)
	if d.TracedNs != want || want == 0 {
		t.Errorf("components --tid 101: traced %d, the thread's %d", d.TracedNs, want)
	}
	if all := componentsJSON(t, dir, p); all.TracedNs <= want {
		t.Errorf("the whole profile's traced time %d, not above one thread's %d", all.TracedNs, want)
	}
}

// components shows busy time by default, as summary does: the same busy
// time in all, and --scope wall the wall time.
func TestComponentsBusyByDefault(t *testing.T) {
	dir := t.TempDir()
	recordWith(t, dir, "demo.data", []string{"--sample", "0"}, "demo")
	for _, c := range []struct {
		args  []string
		times string
	}{{nil, "busy"}, {[]string{"--scope", "wall"}, "wall"}} {
		var s struct {
			Totals struct {
				TracedNs int64 `json:"traced_ns"`
			} `json:"totals"`
		}
		decodeSummary(t, dir, &s, append(slices.Clone(c.args), "demo.data")...)
		d := componentsJSON(t, dir, append(slices.Clone(c.args), "demo.data")...)
		if d.Times != c.times || d.TracedNs != s.Totals.TracedNs {
			t.Errorf("components %v: %s time %d, want %s as summary's %d", c.args, d.Times, d.TracedNs, c.times, s.Totals.TracedNs)
		}
	}
}
