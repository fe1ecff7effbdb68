package diff_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/profile-dev/profile/diff"
	"github.com/profile-dev/profile/internal/golden"
	"github.com/profile-dev/profile/internal/schemacheck"
	"github.com/profile-dev/profile/model/modeltest"
)

// reports are the golden cases: the changed sample with two gates, the
// same sorted by calls and cut to 4 rows, and the sample against itself.
func reports(t *testing.T) map[string]*diff.Report {
	t.Helper()
	gates := func(exprs ...string) []*diff.Gate {
		var gs []*diff.Gate
		for _, e := range exprs {
			g, err := diff.ParseGate(e)
			must(t, err)
			gs = append(gs, g)
		}
		return gs
	}
	same, err := diff.Compare(modeltest.Sample(), modeltest.Sample())
	must(t, err)
	cases := map[string]struct {
		r   *diff.Result
		opt diff.Options
	}{
		"sample": {compare(t), diff.Options{BaseName: "base.data", NewName: "new.data",
			Gates: gates("self>+50%&self>+50ns", "func~^(fib|worker)$:calls<-1")}},
		"sample-calls-top4": {compare(t), diff.Options{BaseName: "base.data", NewName: "new.data", Sort: diff.SortCalls, Top: 4}},
		"same":              {same, diff.Options{BaseName: "a.data", NewName: "a.data", Gates: gates("self>+0%", "calls>+0")}},
	}
	out := map[string]*diff.Report{}
	for name, c := range cases {
		rep, err := c.r.Report(c.opt)
		must(t, err)
		out[name] = rep
	}
	return out
}

func TestGolden(t *testing.T) {
	for name, rep := range reports(t) {
		for _, ext := range []string{"txt", "md", "json"} {
			format := map[string]string{"txt": "text", "md": "markdown", "json": "json"}[ext]
			write, ok := diff.Writer(format)
			if !ok {
				t.Fatalf("no writer for %s", format)
			}
			var buf bytes.Buffer
			must(t, write(&buf, rep))
			golden.Check(t, name+"."+ext, buf.Bytes())
		}
	}
	if _, ok := diff.Writer("csv"); ok {
		t.Error("a writer for csv")
	}
}

func TestGoldenVerdicts(t *testing.T) {
	reps := reports(t)
	var lines []string
	for _, b := range reps["sample"].Breaches {
		lines = append(lines, b.Describe())
	}
	want := []string{
		"libc.so.6:usleep breaks self>+50%&self>+50ns (self 500ns → 900ns, +400ns, +80.00%)",
		"worker breaks func~^(fib|worker)$:calls<-1 (calls 3 → 1, -2, -66.67%)",
		"fib breaks self>+50%&self>+50ns (self 135ns → 220ns, +85ns, +62.96%)",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("breaches:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	if b := reps["same"].Breaches; len(b) != 0 {
		t.Errorf("a profile against itself breaks gates: %+v", b)
	}
}

func TestJSONSchema(t *testing.T) {
	schema, err := schemacheck.Load("../docs/diff.schema.json")
	must(t, err)
	for name, rep := range reports(t) {
		var buf bytes.Buffer
		must(t, diff.WriteJSON(&buf, rep))
		doc, err := schemacheck.Decode(buf.Bytes())
		must(t, err)
		if errs := schemacheck.Check(schema, doc); len(errs) > 0 {
			t.Errorf("%s does not match the schema:\n%s", name, strings.Join(errs, "\n"))
		}
	}
	// the schema does reject what it forbids
	bad := map[string]string{
		"extra field": `{"format":"profile-diff/1","sort":"self","base":{},"new":{},"totals":{},"functions":[],"edges":[],"gates":[],"x":1}`,
		"float time":  `{"functions":[{"self":{"base":1.5}}]}`,
		"string rel":  `{"functions":[{"self":{"rel_pct":"12%"}}]}`,
		"bad status":  `{"functions":[{"status":"changed"}]}`,
		"bad kind":    `{"edges":[{"kind":"jump"}]}`,
		"bad sort":    `{"sort":"size"}`,
		"no delta":    `{"edges":[{"calls":{"base":1,"new":1}}]}`,
	}
	for name, text := range bad {
		doc, err := schemacheck.Decode([]byte(text))
		must(t, err)
		if errs := schemacheck.Check(schema, doc); len(errs) == 0 {
			t.Errorf("the schema accepts a document with a %s", name)
		}
	}
}
