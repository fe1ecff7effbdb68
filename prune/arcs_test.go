package prune

import (
	"reflect"
	"regexp"
	"testing"

	"github.com/profile-dev/profile/merge"
	"github.com/profile-dev/profile/model/modeltest"
)

// Counted calls keep to their callee's fate; a dropped caller becomes
// "-". modeltest.Counted: traced 1735 ns, 45 calls (24 counted); hash 22
// calls and checksum 2, no time; main 2 calls (one in flight), compute 2,
// child_work 1; self time over 10%: usleep, worker, compute; total time
// over 10%: main, usleep, worker, do_fork, compute.
func TestPruneArcs(t *testing.T) {
	cases := []struct {
		name  string
		opt   Options
		arcs  [][]string // by thread: 100, 101, 102, 200
		paths [][]string // by thread, with Keep: the contexts kept
	}{
		{"min calls 3: callers dropped", Options{MinCalls: 3}, [][]string{
			{"->hash 7", "hash>hash 5"}, {"->hash 7"}, {"->hash 2"}, {"->hash 1"},
		}, nil},
		{"self 10%: counted functions not judged by time", Options{Threshold: 0.10, Metric: Self}, [][]string{
			{"->hash 7", "hash>hash 5"}, {"->hash 3", "compute>hash 4"}, {"compute>hash 2"}, {"->hash 1", "hash>checksum 2"},
		}, nil},
		{"total 10%", Options{Threshold: 0.10}, [][]string{
			{"main>hash 7", "hash>hash 5"}, {"->hash 3", "compute>hash 4"}, {"compute>hash 2"}, {"->hash 1", "hash>checksum 2"},
		}, nil},
		{"calls 50%: counted calls judged", Options{Threshold: 0.50, Metric: Calls}, [][]string{nil, nil, nil, nil}, nil},
		{"min calls 23", Options{MinCalls: 23}, [][]string{nil, nil, nil, nil}, nil},
		{"keep hash: its callers' contexts kept", Options{Keep: regexp.MustCompile(`^hash$`)}, [][]string{
			{"main>hash 7", "hash>hash 5"}, {"->hash 3", "compute>hash 4"}, {"compute>hash 2"}, {"child_work>hash 1"},
		}, [][]string{
			{"START", "START>main"},
			{"START", "START>worker", "START>worker>compute"},
			{"START", "START>worker", "START>worker>compute"},
			{"START", "START>main", "START>main>do_fork", "START>main>do_fork>child_work"},
		}},
		{"keep checksum: a caller without context dropped", Options{Keep: regexp.MustCompile(`^checksum$`)}, [][]string{
			nil, nil, nil, {"->checksum 2"},
		}, [][]string{{"START"}, {"START"}, {"START"}, {"START"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := modeltest.Counted()
			q := mustPrune(t, p, c.opt)
			for ti := range q.Threads {
				if got := modeltest.Arcs(q, &q.Threads[ti]); !reflect.DeepEqual(got, c.arcs[ti]) {
					t.Errorf("thread %d arcs %q, want %q", ti, got, c.arcs[ti])
				}
				if c.paths != nil {
					if got := pathsOf(q, &q.Threads[ti]); !reflect.DeepEqual(got, c.paths[ti]) {
						t.Errorf("thread %d contexts %q, want %q", ti, got, c.paths[ti])
					}
				}
			}
		})
	}
}

// A composite thread's arcs that meet once their callers are dropped sum
// their member shares.
func TestPruneCompositeArcs(t *testing.T) {
	m, err := merge.MergeRuns([]merge.Run{{Name: "a", Profile: modeltest.Counted()}, {Name: "b", Profile: modeltest.Counted()}})
	if err != nil {
		t.Fatal(err)
	}
	q := mustPrune(t, m, Options{MinCalls: 5})
	want := [][]string{
		{"->hash 16 [0:7 1:1 2:7 3:1]", "hash>hash 10 [0:5 2:5]"},
		{"->hash 14 [0:7 1:7]"},
		{"->hash 4 [0:2 1:2]"},
	}
	for ti := range q.Threads {
		if got := modeltest.Arcs(q, &q.Threads[ti]); !reflect.DeepEqual(got, want[ti]) {
			t.Errorf("level %d arcs %q, want %q", ti, got, want[ti])
		}
	}
	// the input's arcs are its own
	q.Threads[1].Arcs[0].Contribs[0].Calls++
	q.Threads[1].Arcs[0].Calls++
	if n := m.Threads[1].Arcs; n[0].Calls != 6 || n[0].Contribs[0].Calls != 3 {
		t.Errorf("prune changed its input's arcs: %+v", n)
	}
}
