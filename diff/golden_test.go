package diff_test

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/profile-dev/profile/diff"
	"github.com/profile-dev/profile/internal/golden"
	"github.com/profile-dev/profile/internal/schemacheck"
	"github.com/profile-dev/profile/model"
	"github.com/profile-dev/profile/model/modeltest"
)

// reports are the golden cases: the changed sample with two gates, the
// same sorted by calls and cut to 4 rows, per call with a noise floor, the
// sample against itself, and the real profiles of wideCases.
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
		// 50ns of noise: child_work's 85ns gone is listed, spawn_more's
		// 10ns is not; cache_lookup's 40ns new is under the floor
		"sample-per-call": {compare(t), diff.Options{BaseName: "base.data", NewName: "new.data", PerCall: true,
			Noise: diff.Noise{Ns: 50}, Gates: gates("self/call>+20%", "total/call<-50%")}},
	}
	wide := wideResult(t)
	for name, opt := range wideCases(t) {
		cases[name] = struct {
			r   *diff.Result
			opt diff.Options
		}{wide, opt}
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
			if ext != "txt" {
				continue
			}
			for _, l := range strings.Split(buf.String(), "\n") {
				if n := utf8.RuneCountInString(l); n > diff.Width {
					t.Errorf("%s: a line of %d columns, more than %d:\n%s", name, n, diff.Width, l)
				}
			}
		}
		golden.Check(t, name+".stderr", []byte(strings.Join(append(rep.Messages(), ""), "\n")))
	}
	if _, ok := diff.Writer("csv"); ok {
		t.Error("a writer for csv")
	}
}

// wideResult compares two real profiles of one workload, recorded by
// testdata/record-wide.sh: testdata/src/wide.cpp (348 C++ functions) at
// 1 and 2 rounds, twice the work at the same cost per call. Their busy
// times, as diff's default.
func wideResult(t *testing.T) *diff.Result {
	t.Helper()
	read := func(name string) *model.Profile {
		p, err := model.ReadFile(filepath.Join("testdata", name))
		must(t, err)
		return p
	}
	r, err := diff.CompareBusy(read("wide-1x.data"), read("wide-2x.data"))
	must(t, err)
	return r
}

// wideCases are the reports of wideResult, with the default noise floor:
// per call, and in totals (the default view).
func wideCases(t *testing.T) map[string]diff.Options {
	t.Helper()
	noise, err := diff.ParseNoise(diff.DefaultNoise)
	must(t, err)
	gate, err := diff.ParseGate("self/call>+20%")
	must(t, err)
	totals, err := diff.ParseGate("self>+10%")
	must(t, err)
	return map[string]diff.Options{
		"wide-per-call": {BaseName: "wide-1x.data", NewName: "wide-2x.data", PerCall: true, Noise: noise,
			Gates: []*diff.Gate{gate}},
		"wide-totals": {BaseName: "wide-1x.data", NewName: "wide-2x.data", Noise: noise, Top: 20,
			Gates: []*diff.Gate{totals, gate}},
	}
}

// TestGoldenRealProfiles is issue #30's acceptance test on two real runs
// of one workload, the second doing twice the work: per call nothing is
// flagged; in totals everything doubled, and the report still fits Width
// columns (TestGolden) and the gate message MaxNamed+1 lines.
func TestGoldenRealProfiles(t *testing.T) {
	reps := reports(t)
	if b := reps["wide-per-call"].Breaches; len(b) != 0 {
		t.Errorf("per call, twice the work breaks self/call>+20%%: %s", strings.Join(reps["wide-per-call"].Messages(), "\n"))
	}
	tot := reps["wide-totals"]
	// self/call is a gate's metric, the same with or without --per-call
	if len(tot.Gates[1].Functions) != 0 || len(tot.Gates[0].Functions) <= diff.MaxNamed {
		t.Errorf("totals: self>+10%% broken by %d, self/call>+20%% by %d; want more than %d and none",
			len(tot.Gates[0].Functions), len(tot.Gates[1].Functions), diff.MaxNamed)
	}
	msg := tot.Messages()
	if len(msg) > 12 || len(msg) != diff.MaxNamed+1 || !strings.HasPrefix(msg[diff.MaxNamed], "… and ") {
		t.Errorf("gate message of %d lines:\n%s", len(msg), strings.Join(msg, "\n"))
	}
	for _, l := range msg {
		if strings.Contains(l, "(long)") { // the full names' parameters
			t.Errorf("a gate message names a function in full: %s", l)
		}
	}
	// the floor is what keeps sampling noise out: without it, some light
	// functions' time per call moves by more than 20%
	res := wideResult(t)
	opt := wideCases(t)["wide-per-call"]
	opt.Noise = diff.Noise{}
	rep, err := res.Report(opt)
	must(t, err)
	if len(rep.Breaches) == 0 {
		t.Error("with no noise floor, no function breaks self/call>+20%: the floor is not what the per-call gate's passing rests on")
	}
}

func TestGoldenVerdicts(t *testing.T) {
	reps := reports(t)
	lines := reps["sample"].Messages()
	want := []string{
		"libc.so.6:usleep breaks self>+50%&self>+50ns (self 500ns → 900ns, +400ns, +80.00%)",
		"fib breaks self>+50%&self>+50ns (self 135ns → 220ns, +85ns, +62.96%)",
		"worker breaks func~^(fib|worker)$:calls<-1 (calls 3 → 1, -2, -66.67%)",
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
