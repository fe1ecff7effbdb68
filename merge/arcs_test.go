package merge

import (
	"reflect"
	"testing"

	"github.com/profile-dev/profile/model"
	"github.com/profile-dev/profile/model/modeltest"
)

// Composite threads sum their members' counted calls by (caller, callee),
// split by member, in the order of the canonical function indices (by
// callee, then caller: checksum before hash, child_work before hash before
// main). Members are numbered in canonical order: at level 0, run a's
// threads 100 and 200, then run b's.
func TestMergeArcs(t *testing.T) {
	cases := []struct {
		name string
		runs []Run
		want [][]string // by level
	}{
		{"one run", []Run{{"a", modeltest.Counted()}}, [][]string{
			{"hash>checksum 2 [1:2]", "child_work>hash 1 [1:1]", "hash>hash 5 [0:5]", "main>hash 7 [0:7]"},
			{"->hash 3 [0:3]", "compute>hash 4 [0:4]"},
			{"compute>hash 2 [0:2]"},
		}},
		{"two runs", []Run{{"a", modeltest.Counted()}, {"b", modeltest.Counted()}}, [][]string{
			{"hash>checksum 4 [1:2 3:2]", "child_work>hash 2 [1:1 3:1]", "hash>hash 10 [0:5 2:5]", "main>hash 14 [0:7 2:7]"},
			{"->hash 6 [0:3 1:3]", "compute>hash 8 [0:4 1:4]"},
			{"compute>hash 4 [0:2 1:2]"},
		}},
		{"with a run without arcs", []Run{{"a", modeltest.Counted()}, {"b", modeltest.Sample()}}, [][]string{
			{"hash>checksum 2 [1:2]", "child_work>hash 1 [1:1]", "hash>hash 5 [0:5]", "main>hash 7 [0:7]"},
			{"->hash 3 [0:3]", "compute>hash 4 [0:4]"},
			{"compute>hash 2 [0:2]"},
		}},
		{"without arcs", []Run{{"a", modeltest.Sample()}}, [][]string{nil, nil, nil}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := mustMerge(t, c.runs...)
			var got [][]string
			for i := range m.Threads {
				got = append(got, modeltest.Arcs(m, &m.Threads[i]))
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("arcs by level:\n%q\nwant\n%q", got, c.want)
			}
		})
	}
}

// Every thread of the inputs still sees its own counted calls in the
// composite: the graph of one tid has the same counted calls.
func TestMergeArcsByThread(t *testing.T) {
	src := modeltest.Counted()
	m := mustMerge(t, Run{"a", src}, Run{"b", modeltest.Sample()})
	for _, s := range []model.Scope{{}, {Tid: 100}, {Tid: 101}, {Tid: 102}, {Pid: 200}} {
		want, got := countedCalls(src, s), countedCalls(m, s)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%+v: counted calls %v, want %v", s, got, want)
		}
	}
}

// countedCalls maps each function to its counted calls in scope s.
func countedCalls(p *model.Profile, s model.Scope) map[string]int64 {
	out := map[string]int64{}
	for _, n := range p.Graph(s).Nodes {
		if n.CountedCalls > 0 {
			out[p.FuncName(n.Key.Func)] += n.CountedCalls
		}
	}
	return out
}
