package model_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/profile-dev/profile/model"
	"github.com/profile-dev/profile/model/modeltest"
)

// Sample's threads: 100 (#0) spawned 101 (#1), which spawned 102 (#2);
// process 200 (thread 200, #3) was forked by thread 100. In the composite
// sample 101 and 102 are members (runs 0 and 1) of one thread.
func TestThreadNumbers(t *testing.T) {
	orphan := func() *model.Profile { // 101's parent thread was never seen
		p := modeltest.Sample()
		p.Threads[1].ParentTid = 999
		return p
	}
	none := model.None
	ref := func(thread, member int) model.ThreadRef { return model.ThreadRef{Thread: thread, Member: member} }
	for _, c := range []struct {
		name    string
		p       func() *model.Profile
		tids    []string                // "tid/run" by number
		numbers map[model.ThreadRef]int // ref -> number
		spawner []int                   // by number: Creator(n, EdgeSpawn)
		forker  []int                   // by number: Creator(n, EdgeFork)
		scope   model.Scope
		inScope []int // numbers in scope
	}{
		{name: "sample", p: modeltest.Sample, tids: []string{"100/0", "101/0", "102/0", "200/0"},
			numbers: map[model.ThreadRef]int{ref(0, none): 0, ref(2, none): 2, ref(3, none): 3, ref(4, none): -1, ref(1, 0): -1},
			spawner: []int{-1, 0, 1, -1}, forker: []int{-1, -1, -1, 0},
			scope: model.Scope{Pid: 100}, inScope: []int{0, 1, 2}},
		{name: "composite", p: modeltest.SampleComposite, tids: []string{"100/0", "101/0", "102/1", "200/0"},
			// the whole composite thread is its first member; 102 of run 1
			// has no thread 101 of run 1 to be spawned by
			numbers: map[model.ThreadRef]int{ref(0, none): 0, ref(1, none): 1, ref(1, 0): 1, ref(1, 1): 2, ref(2, none): 3, ref(1, 2): -1},
			spawner: []int{-1, 0, -1, -1}, forker: []int{-1, -1, -1, 0},
			scope: model.Scope{Tid: 102}, inScope: []int{2}},
		{name: "orphan", p: orphan, tids: []string{"100/0", "101/0", "102/0", "200/0"},
			numbers: map[model.ThreadRef]int{ref(1, none): 1},
			spawner: []int{-1, -1, 1, -1}, forker: []int{-1, -1, -1, 0},
			scope: model.Scope{Pid: 200, Tid: 200}, inScope: []int{3}},
	} {
		t.Run(c.name, func(t *testing.T) {
			n := c.p().ThreadNumbers()
			var tids []string
			for i, th := range n.Threads {
				if th.Number != i {
					t.Errorf("thread %d has number %d", i, th.Number)
				}
				tids = append(tids, fmt.Sprintf("%d/%d", th.Tid, th.Run))
			}
			if !slices.Equal(tids, c.tids) {
				t.Errorf("threads %v, want %v", tids, c.tids)
			}
			for r, want := range c.numbers {
				if got := n.Number(r); got != want {
					t.Errorf("Number(%+v) = %d, want %d", r, got, want)
				}
			}
			for num := range c.spawner {
				if got := n.Creator(num, model.EdgeSpawn); got != c.spawner[num] {
					t.Errorf("spawn creator of %d = %d, want %d", num, got, c.spawner[num])
				}
				if got := n.Creator(num, model.EdgeFork); got != c.forker[num] {
					t.Errorf("fork creator of %d = %d, want %d", num, got, c.forker[num])
				}
			}
			if got := n.Creator(-1, model.EdgeSpawn); got != -1 {
				t.Errorf("creator of no thread = %d", got)
			}
			var in []int
			for _, th := range n.InScope(c.scope) {
				in = append(in, th.Number)
			}
			if !slices.Equal(in, c.inScope) {
				t.Errorf("in scope %+v: %v, want %v", c.scope, in, c.inScope)
			}
		})
	}
}

func TestCreationLabel(t *testing.T) {
	for _, c := range []struct {
		creator, n int
		want       string
	}{
		{0, 1, "0→1"},
		{12, 3, "12→3"},
		{-1, 3, "?→3"}, // the creator is not in the profile
		{2, -1, "2→?"},
	} {
		if got := model.CreationLabel(c.creator, c.n); got != c.want {
			t.Errorf("CreationLabel(%d, %d) = %q, want %q", c.creator, c.n, got, c.want)
		}
	}
}
