package chrometest

import (
	"strconv"
	"strings"
	"testing"
)

// names are the metadata of pid 1's threads 1 and 2.
const names = `{"name":"process_name","ph":"M","pid":1,"tid":1,"args":{"name":"p"}},
{"name":"thread_name","ph":"M","pid":1,"tid":1,"args":{"name":"a"}},
{"name":"thread_name","ph":"M","pid":1,"tid":2,"args":{"name":"b"}},`

func trace(events string) string {
	return `{"traceEvents":[` + names + events + `],"displayTimeUnit":"ms","otherData":{"v":1}}`
}

func TestCheckAccepts(t *testing.T) {
	tr, err := Check([]byte(trace(`
{"name":"a","cat":"c","ph":"X","ts":1,"dur":10,"pid":1,"tid":1,"args":{"x":1}},
{"name":"b","cat":"c","ph":"X","ts":1,"dur":10,"pid":1,"tid":1},
{"name":"c","cat":"c","ph":"X","ts":2.5,"dur":0,"pid":1,"tid":1},
{"name":"m","cat":"k","ph":"i","s":"t","ts":3,"pid":1,"tid":1},
{"name":"k","cat":"k","ph":"s","ts":3,"pid":1,"tid":1,"id":7},
{"name":"d","cat":"c","ph":"X","ts":11,"dur":1,"pid":1,"tid":1},
{"name":"e","cat":"c","ph":"X","ts":3,"dur":1.0011,"pid":1,"tid":2},
{"name":"k","cat":"k","ph":"f","bp":"e","ts":3,"pid":1,"tid":2,"id":7}`)))
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Events) != 11 || tr.DisplayTimeUnit != "ms" || tr.ProcessNames[1] != "p" || tr.ThreadNames[[2]int{1, 2}] != "b" {
		t.Errorf("trace %+v", tr)
	}
	e := tr.Events[9]
	if e.Name != "e" || e.TsNs != 3000 || e.DurNs != 1001 || e.Dur != "1.0011" {
		t.Errorf("event %+v", e)
	}
	if s, f := tr.Events[7], tr.Events[10]; tr.Events[s.Enclosing].Name != "m" || tr.Events[f.Enclosing].Name != "e" {
		t.Errorf("flow binds to %d and %d", s.Enclosing, f.Enclosing)
	}
}

// Every rule fails a trace that breaks it.
func TestCheckRejects(t *testing.T) {
	x := func(name, ts, dur string, tid int) string {
		return `{"name":"` + name + `","cat":"c","ph":"X","ts":` + ts + `,"dur":` + dur + `,"pid":1,"tid":` + strconv.Itoa(tid) + `}`
	}
	for _, c := range []struct{ data, want string }{
		{`[]`, "not a JSON object"},
		{`{"traceEvents":[]} {}`, "data after"},
		{`{"other":[]}`, `no "traceEvents"`},
		{`{"traceEvents":[],"displayTimeUnit":"s"}`, "displayTimeUnit"},
		{trace(`{"name":"a","ph":"Q","ts":1,"pid":1,"tid":1}`), "phase Q"},
		{trace(`{"ph":"i","ts":1,"pid":1,"tid":1}`), "no name"},
		{trace(`{"name":"a","ph":"i","ts":1,"tid":1}`), "no pid"},
		{trace(`{"name":"a","ph":"i","ts":1,"pid":-1,"tid":1}`), "pid -1"},
		{trace(`{"name":"a","ph":"i","pid":1,"tid":1}`), "no number ts"},
		{trace(`{"name":"a","ph":"i","s":"x","ts":1,"pid":1,"tid":1}`), "instant scope x"},
		{trace(`{"name":"a","cat":"c","ph":"X","ts":1,"pid":1,"tid":1}`), "X without a non-negative dur"},
		{trace(`{"name":"a","ph":"X","ts":1,"dur":1,"pid":1,"tid":1}`), "X without cat"},
		{trace(`{"name":"a","cat":"c","ph":"X","ts":1,"dur":1,"pid":1,"tid":1,"args":3}`), "args is not an object"},
		{trace(x("a", "1.001", "1", 1)), "Perfetto takes it for 1000 ns, not 1001"},
		{trace(x("a", "5", "1", 1) + "," + x("b", "4", "1", 1)), `"b" at 4000 ns before`},
		{trace(x("a", "1", "10", 1) + "," + x("b", "5", "10", 1)), `"b" [5000, 15000] ns overlaps "a" [1000, 11000]`},
		{trace(x("a", "1", "10", 1) + "," + x("b", "5", "1", 2) + "," + x("c", "11", "1", 1)), ""}, // threads apart
		{trace(x("a", "1", "1", 1) + `,{"name":"k","cat":"k","ph":"s","ts":3,"pid":1,"tid":1,"id":1}`), "no event encloses it"},
		{trace(x("a", "1", "5", 1) + `,{"name":"k","cat":"k","ph":"s","ts":3,"pid":1,"tid":1,"id":1}`), "1 starts and 0 ends"},
		{trace(x("a", "1", "5", 1) + `,{"name":"k","cat":"k","ph":"s","ts":3,"pid":1,"tid":1}`), "flow s without id"},
		{trace(x("a", "1", "5", 1) + `,{"name":"k","ph":"s","ts":3,"pid":1,"tid":1,"id":1}`), "flow s without cat"},
		{trace(x("a", "1", "5", 1) + `,{"name":"k","cat":"k","ph":"f","bp":"x","ts":3,"pid":1,"tid":1,"id":1}`), `bp x`},
		{trace(x("a", "1", "5", 1) + "," + x("b", "1", "5", 2) +
			`,{"name":"k","cat":"k","ph":"f","bp":"e","ts":2,"pid":1,"tid":1,"id":1}` +
			`,{"name":"k","cat":"k","ph":"s","ts":3,"pid":1,"tid":2,"id":1}`), "ends at 2000 ns before it starts at 3000 ns"},
		{trace(`{"name":"a","cat":"c","ph":"X","ts":1,"dur":1,"pid":2,"tid":2}`), "pid 2 has no process_name"},
		{trace(`{"name":"a","cat":"c","ph":"X","ts":1,"dur":1,"pid":1,"tid":3}`), "pid 1 tid 3 has no thread_name"},
		{trace(`{"name":"thread_name","ph":"M","pid":1,"tid":4,"args":{}}`), "thread_name without args.name"},
		{trace(`{"name":"thread_title","ph":"M","pid":1,"tid":4}`), `metadata "thread_title" unknown`},
	} {
		_, err := Check([]byte(c.data))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.data, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: error %v, want %q", c.data, err, c.want)
		}
	}
}
