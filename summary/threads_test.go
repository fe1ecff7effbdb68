package summary_test

import (
	"bytes"
	"encoding/json"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/profile-dev/profile/internal/golden"
	"github.com/profile-dev/profile/model/modeltest"
	"github.com/profile-dev/profile/summary"
)

func threadReports(t *testing.T) map[string]*summary.Report {
	return map[string]*summary.Report{
		"sample":    mustCompute(t, modeltest.Sample(), summary.Options{Threads: true}),
		"composite": mustCompute(t, modeltest.SampleComposite(), summary.Options{Threads: true}),
		"tid":       mustCompute(t, modeltest.Sample(), summary.Options{Threads: true, Tid: 101}),
		"top3":      mustCompute(t, modeltest.Sample(), summary.Options{Threads: true, Top: 3}),
		"synthetic": mustCompute(t, modeltest.Synthetic(5000, 3, 11), summary.Options{Threads: true}),
		"counted":   mustCompute(t, modeltest.Counted(), summary.Options{Threads: true}),
	}
}

func TestThreadsGolden(t *testing.T) {
	writers := map[string]func(io.Writer, *summary.Report) error{
		"txt": summary.WriteTable, "md": summary.WriteMarkdown, "json": summary.WriteJSON,
	}
	rs := threadReports(t)
	for _, name := range []string{"sample", "composite", "counted"} {
		for ext, w := range writers {
			var buf bytes.Buffer
			must(t, w(&buf, rs[name]))
			golden.Check(t, name+"-threads."+ext, buf.Bytes())
		}
	}
}

// The shares of a function or edge add up to its numbers, every share is
// a thread in scope, and without the option nothing changes.
func TestThreadSharesAddUp(t *testing.T) {
	for name, r := range threadReports(t) {
		inScope := map[int]bool{}
		for _, th := range r.Threads {
			if th.Number == nil {
				t.Fatalf("%s: thread %d has no number", name, th.Tid)
			}
			inScope[*th.Number] = true
		}
		for _, f := range r.Functions {
			var sum summary.FunctionShare
			for _, x := range f.Threads {
				if !inScope[x.Thread] {
					t.Errorf("%s: %s: share of thread %d, not in scope", name, f.Display, x.Thread)
				}
				sum.Calls += x.Calls
				sum.RecursiveCalls += x.RecursiveCalls
				sum.SelfNs += x.SelfNs
				sum.TotalNs += x.TotalNs
			}
			if sum.Calls != f.Calls || sum.RecursiveCalls != f.RecursiveCalls || sum.SelfNs != f.SelfNs || sum.TotalNs != f.TotalNs {
				t.Errorf("%s: %s: shares add up to %+v, function %+v", name, f.Display, sum, f)
			}
		}
		for _, e := range r.Edges {
			var sum summary.EdgeShare
			for _, x := range e.Threads {
				if !inScope[x.Thread] || (x.Creator == nil) != (e.Kind == "call") {
					t.Errorf("%s: %s -> %s (%s): share %+v", name, e.CallerDisplay, e.CalleeDisplay, e.Kind, x)
				}
				sum.Calls += x.Calls
				sum.RecursiveCalls += x.RecursiveCalls
				sum.TotalNs += x.TotalNs
			}
			if sum.Calls != e.Calls || sum.RecursiveCalls != e.RecursiveCalls || sum.TotalNs != e.TotalNs || len(e.Threads) == 0 {
				t.Errorf("%s: %s -> %s: shares add up to %+v, edge %+v", name, e.CallerDisplay, e.CalleeDisplay, sum, e)
			}
		}
	}
	plain := mustCompute(t, modeltest.Sample(), summary.Options{})
	with := mustCompute(t, modeltest.Sample(), summary.Options{Threads: true})
	var a, b bytes.Buffer
	must(t, summary.WriteJSON(&a, plain))
	must(t, summary.WriteJSON(&b, with))
	if strings.Contains(a.String(), "by_thread") || strings.Contains(a.String(), `"number"`) ||
		!strings.Contains(b.String(), "by_thread") {
		t.Errorf("by_thread and number must appear with Threads only")
	}
}

// Sample's threads, numbered in profile order: 0 = tid 100 spawns 1 = tid
// 101, which spawns 2 = tid 102; 0 forks the process whose first thread
// is 3 = tid 200. A composite thread's members are numbered in order.
func TestThreadNumbersAndSpawns(t *testing.T) {
	type rel struct {
		caller, kind    string
		creator, thread int
	}
	for name, c := range map[string]struct {
		r       *summary.Report
		numbers map[int]int // tid -> number
		rels    []rel
	}{
		"sample": {threadReports(t)["sample"], map[int]int{100: 0, 101: 1, 102: 2, 200: 3},
			[]rel{{"spawn_workers", "spawn", 0, 1}, {"spawn_more", "spawn", 1, 2}, {"do_fork", "fork", 0, 3}}},
		// the composite's member 102 comes from run 1, where no tid 101 ran:
		// its creator is unknown ("?→2"), as render --threads draws it
		"composite": {threadReports(t)["composite"], map[int]int{100: 0, 101: 1, 102: 2, 200: 3},
			[]rel{{"spawn_workers", "spawn", 0, 1}, {"spawn_more", "spawn", -1, 2}, {"do_fork", "fork", 0, 3}}},
		// in scope: tid 101 only, keeping its number; its spawn of 102 is out of scope
		"tid": {threadReports(t)["tid"], map[int]int{101: 1}, []rel{{"spawn_workers", "spawn", 0, 1}}},
	} {
		got := map[int]int{}
		for _, th := range c.r.Threads {
			got[th.Tid] = *th.Number
		}
		if !reflect.DeepEqual(got, c.numbers) {
			t.Errorf("%s: thread numbers %v, want %v", name, got, c.numbers)
		}
		var rels []rel
		for _, e := range c.r.Edges {
			for _, x := range e.Threads {
				if x.Creator != nil {
					rels = append(rels, rel{e.Caller, e.Kind, *x.Creator, x.Thread})
				}
			}
		}
		if len(rels) != len(c.rels) {
			t.Errorf("%s: spawn relations %v, want %v", name, rels, c.rels)
		}
		for _, w := range c.rels {
			found := false
			for _, g := range rels {
				found = found || g == w
			}
			if !found {
				t.Errorf("%s: no %s %d→%d by %s in %v", name, w.kind, w.creator, w.thread, w.caller, rels)
			}
		}
	}
	var tb bytes.Buffer
	must(t, summary.WriteTable(&tb, threadReports(t)["sample"]))
	for _, w := range []string{"│ 0→1 │", "│ 1→2 │", "│ 0→3 │"} {
		if !strings.Contains(tb.String(), w) {
			t.Errorf("table has no %q", w)
		}
	}
}

// A thread whose creator is not in the profile is "?" (creator -1).
func TestUnknownCreator(t *testing.T) {
	p := modeltest.Sample()
	p.Threads[1].ParentTid = 999 // 101's parent thread was never seen
	r := mustCompute(t, p, summary.Options{Threads: true})
	var tb bytes.Buffer
	must(t, summary.WriteTable(&tb, r))
	if !strings.Contains(tb.String(), "│ ?→1 │") {
		t.Errorf("no ?→1 in\n%s", tb.String())
	}
}

// The JSON with shares is what encoding/json writes, reads back the same,
// and matches the schema.
func TestThreadsJSON(t *testing.T) {
	schema := summarySchema(t)
	for name, r := range threadReports(t) {
		var got bytes.Buffer
		must(t, summary.WriteJSON(&got, r))
		if got.String() != encodingJSON(t, r) {
			t.Errorf("%s: WriteJSON differs from encoding/json", name)
		}
		var back summary.Report
		dec := json.NewDecoder(bytes.NewReader(got.Bytes()))
		dec.DisallowUnknownFields()
		must(t, dec.Decode(&back))
		if !reflect.DeepEqual(visible(&back), visible(r)) {
			t.Errorf("%s: JSON round trip differs", name)
		}
		if errs := schemaErrors(t, schema, got.Bytes()); len(errs) > 0 {
			t.Errorf("%s does not match the schema:\n%s", name, strings.Join(errs, "\n"))
		}
	}
	bad := `{"functions":[{"by_thread":[{"thread":0,"calls":1,"recursive_calls":0,"self_ns":0,"total_ns":0,"self_pct":0,"total_pct":0,"x":1}]}]}`
	if errs := schemaErrors(t, schema, []byte(bad)); len(errs) == 0 {
		t.Errorf("schema accepts an unknown field in by_thread")
	}
}

// in a composite thread only the members that reached a context share it
func TestCompositeShares(t *testing.T) {
	r := threadReports(t)["composite"]
	for _, f := range r.Functions {
		if f.Name != "spawn_more" {
			continue
		}
		if len(f.Threads) != 1 || f.Threads[0].Thread != 1 || f.Threads[0].Calls != 1 {
			t.Errorf("spawn_more (member 101 only): shares %+v", f.Threads)
		}
		return
	}
	t.Errorf("no spawn_more in %v", r.Functions)
}
