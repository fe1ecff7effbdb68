package summary_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/profile-dev/profile/merge"
	"github.com/profile-dev/profile/model"
	"github.com/profile-dev/profile/model/modeltest"
	"github.com/profile-dev/profile/summary"
)

// countedRow is a function or edge of a report as a test compares it.
type countedRow struct {
	name      string // function, or "caller>callee"
	calls, rc int64
	counted   bool
}

// Counted functions and edges (modeltest.Counted: hash and checksum) have
// their exact calls and no time; they come after every measured one, the
// most called first.
func TestCounted(t *testing.T) {
	merged, err := merge.Merge(modeltest.Counted(), modeltest.Counted())
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name      string
		p         *model.Profile
		opt       summary.Options
		n         int          // CountedFuncs
		funcs     []countedRow // the last functions of the table
		edges     []countedRow // the last edges; nil: not checked
		noteCount string       // the note's count, "" for none
	}{
		{"whole profile", modeltest.Counted(), summary.Options{}, 2,
			[]countedRow{{"spawn_workers", 1, 0, false}, {"hash", 22, 5, true}, {"checksum", 2, 0, true}},
			[]countedRow{{"main>hash", 7, 0, true}, {"compute>hash", 6, 0, true}, {"hash>hash", 5, 5, true},
				{"hash>checksum", 2, 0, true}, {"child_work>hash", 1, 0, true}}, "2 functions"},
		{"busy", modeltest.Counted(), summary.Options{Busy: true}, 2,
			[]countedRow{{"hash", 22, 5, true}, {"checksum", 2, 0, true}}, nil, "2 functions"},
		{"tid 101: a call from code of no function", modeltest.Counted(), summary.Options{Tid: 101}, 1,
			[]countedRow{{"hash", 7, 0, true}}, []countedRow{{"compute>hash", 4, 0, true}}, "1 function"},
		{"tid 102", modeltest.Counted(), summary.Options{Tid: 102}, 1,
			[]countedRow{{"hash", 2, 0, true}}, []countedRow{{"compute>hash", 2, 0, true}}, "1 function"},
		{"top 3: counted but not listed", modeltest.Counted(), summary.Options{Top: 3}, 2,
			[]countedRow{{"worker", 3, 0, false}}, nil, "2 functions"},
		{"merged, one member", merged, summary.Options{Tid: 101}, 1,
			[]countedRow{{"hash", 14, 0, true}}, []countedRow{{"compute>hash", 8, 0, true}}, "1 function"},
		{"no counted calls", modeltest.Sample(), summary.Options{}, 0,
			[]countedRow{{"spawn_workers", 1, 0, false}}, nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := mustCompute(t, c.p, c.opt)
			if r.CountedFuncs != c.n {
				t.Errorf("CountedFuncs = %d, want %d", r.CountedFuncs, c.n)
			}
			var funcs []countedRow
			for _, f := range r.Functions {
				funcs = append(funcs, countedRow{f.Name, f.Calls, f.RecursiveCalls, f.Counted})
				if f.Counted && (f.SelfNs != 0 || f.TotalNs != 0 || f.SelfPct != 0 || f.TotalPct != 0) {
					t.Errorf("counted %s has times: %+v", f.Name, f.FuncNumbers)
				}
			}
			if got := funcs[len(funcs)-len(c.funcs):]; !reflect.DeepEqual(got, c.funcs) {
				t.Errorf("last functions %v, want %v", got, c.funcs)
			}
			var edges []countedRow
			for _, e := range r.Edges {
				edges = append(edges, countedRow{e.Caller + ">" + e.Callee, e.Calls, e.RecursiveCalls, e.Counted})
			}
			if got := edges[len(edges)-len(c.edges):]; c.edges != nil && !reflect.DeepEqual(got, c.edges) {
				t.Errorf("last edges %v, want %v", got, c.edges)
			}
			var tb bytes.Buffer
			must(t, summary.WriteTable(&tb, r))
			note := c.noteCount + " only counted (--counted): exact calls"
			if has := strings.Contains(tb.String(), note); has != (c.noteCount != "") {
				t.Errorf("note %q shown: %v, want %v\n%s", note, has, c.noteCount != "", tb.String())
			}
		})
	}
}

// A function both timed and counted (a merge of a run that timed it with
// one that counted it) keeps its measured times, its calls all summed.
func TestCountedAndTimed(t *testing.T) {
	b := modeltest.NewBuilder("/bin/app")
	pr := b.Process(10, model.None, "", 0)
	b.Thread(pr, 10, 0, "", 0, nil, []modeltest.Step{
		modeltest.Enter(10, "main"), modeltest.Enter(5, "hash"), modeltest.Exit(40), modeltest.Exit(5),
	})
	b.Count(0, "main", "hash", 9)
	b.P.Functions[b.Func("hash")].Probe = model.ProbeInline
	r := mustCompute(t, b.P, summary.Options{})
	for _, f := range r.Functions {
		if f.Name == "hash" && (f.Counted || f.Calls != 10 || f.SelfNs != 40 || r.CountedFuncs != 0) {
			t.Errorf("hash = %+v, %d counted; want measured, 10 calls, self 40ns", f, r.CountedFuncs)
		}
	}
	for _, e := range r.Edges {
		if e.Callee == "hash" && (e.Counted || e.Calls != 10 || e.TotalNs != 40) {
			t.Errorf("main -> hash = %+v; want measured, 10 calls, total 40ns", e)
		}
	}
}

// The JSON of a counted function, edge and share says "counted" and has
// no time fields at all; a measured one has its times and no "counted".
func TestCountedJSON(t *testing.T) {
	r := mustCompute(t, modeltest.Counted(), summary.Options{Threads: true})
	var buf bytes.Buffer
	must(t, summary.WriteJSON(&buf, r))
	var doc struct {
		Functions []map[string]any `json:"functions"`
		Edges     []map[string]any `json:"edges"`
	}
	must(t, json.Unmarshal(buf.Bytes(), &doc))
	funcTimes, edgeTimes := []string{"self_ns", "total_ns", "self_pct", "total_pct"}, []string{"total_ns", "total_pct"}
	check := func(what string, obj map[string]any, times []string, counted bool) {
		t.Helper()
		if _, has := obj["counted"]; has != counted || counted && obj["counted"] != true {
			t.Errorf("%s: counted %v, want %v", what, obj["counted"], counted)
		}
		for _, k := range times {
			if _, has := obj[k]; has == counted {
				t.Errorf("%s: %s present %v, want %v", what, k, has, !counted)
			}
		}
	}
	seen := 0
	for _, f := range doc.Functions {
		counted := f["name"] == "hash" || f["name"] == "checksum"
		check(f["name"].(string), f, funcTimes, counted)
		for _, sh := range f["by_thread"].([]any) {
			check(f["name"].(string)+" share", sh.(map[string]any), funcTimes, counted)
		}
		if counted {
			seen++
		}
	}
	for _, e := range doc.Edges {
		counted := e["callee"] == "hash" || e["callee"] == "checksum"
		what := e["caller"].(string) + " -> " + e["callee"].(string)
		check(what, e, edgeTimes, counted)
		for _, sh := range e["by_thread"].([]any) {
			check(what+" share", sh.(map[string]any), edgeTimes, counted)
		}
		if counted {
			seen++
		}
	}
	if seen != 7 {
		t.Errorf("%d counted functions and edges, want 7", seen)
	}
}
