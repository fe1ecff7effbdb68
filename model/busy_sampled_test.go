package model_test

import (
	"reflect"
	"regexp"
	"testing"

	"github.com/profile-dev/profile/merge"
	"github.com/profile-dev/profile/model"
	"github.com/profile-dev/profile/model/modeltest"
	"github.com/profile-dev/profile/prune"
)

// nodeAt is the context of thread ti reached from the root through the
// functions named (FuncName).
func nodeAt(t *testing.T, p *model.Profile, ti int, path ...string) *model.Node {
	t.Helper()
	th := &p.Threads[ti]
	at := 0
	for _, name := range path {
		next := -1
		for i := range th.Nodes {
			if i > 0 && th.Nodes[i].Parent == at && p.FuncName(th.Nodes[i].Func) == name {
				next = i
			}
		}
		if next < 0 {
			t.Fatalf("thread %d: no context %v", ti, path)
		}
		at = next
	}
	return &th.Nodes[at]
}

// busyNode is one context's expected busy numbers.
type busyNode struct {
	thread             int
	path               []string
	self, total, calls int64
}

// cpuSampledBusy are modeltest.CPUSampled's contexts in Busy, worked out
// by hand from its script (10ns a sample).
var cpuSampledBusy = []busyNode{
	{0, nil, 10, 0, 0},
	{0, []string{"main"}, 40, 160, 1},
	{0, []string{"main", "fib"}, 10, 60, 1},
	{0, []string{"main", "fib", "fib"}, 20, 0, 1},        // inside fib: its time is in the outer total
	{0, []string{"main", "fib", "fib", "fib"}, 30, 0, 1}, // likewise
	{0, []string{"main", "hash"}, 30, 30, 0},             // counted: made by its samples
	{0, []string{"main", "libc.so.6:read"}, 20, 20, 1},   // a waiting call on a CPU is busy
	{0, []string{"main", "libc.so.6:usleep"}, 0, 0, 1},   // asleep: no sample
	{0, []string{"main", "spawn_workers"}, 0, 10, 1},
	{0, []string{"main", "spawn_workers", "libc.so.6:pthread_create"}, 10, 10, 1},
	{1, nil, 0, 0, 0},
	{1, []string{"hash"}, 10, 10, 0},
	{1, []string{"worker"}, 0, 80, 1},
	{1, []string{"worker", "compute"}, 60, 80, 1},
	{1, []string{"worker", "compute", "hash"}, 20, 20, 0},
}

// With CPU samples, Busy's self times are the sampled ones, inside waiting
// calls too, its totals the recursion-aware sums of the subtrees, a
// thread's traced time their sum; calls stay, the input is unchanged.
func TestBusySampledTimes(t *testing.T) {
	p := modeltest.CPUSampled()
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	before := deepCopy(t, p)
	b := p.Busy()
	if !reflect.DeepEqual(p, before) {
		t.Fatal("Busy changed its input")
	}
	if err := b.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, c := range cpuSampledBusy {
		n := nodeAt(t, b, c.thread, c.path...)
		if n.SelfNs != c.self || n.TotalNs != c.total || n.Calls != c.calls || n.DroppedNs != 0 {
			t.Errorf("thread %d %v: self %d total %d calls %d dropped %d, want %d, %d, %d, 0",
				c.thread, c.path, n.SelfNs, n.TotalNs, n.Calls, n.DroppedNs, c.self, c.total, c.calls)
		}
	}
	for ti, want := range []int64{170, 90} {
		if got := b.Threads[ti].TracedNs; got != want {
			t.Errorf("thread %d: traced %d, want %d (the sum of its samples)", ti, got, want)
		}
	}
}

// A composite thread's members take their sampled times share by share:
// two runs of CPUSampled merged are each run's numbers twice, each member
// its own run's.
func TestBusySampledComposite(t *testing.T) {
	second := modeltest.CPUSampled()
	second.Processes[0].Pid = 2
	m, err := merge.Merge(modeltest.CPUSampled(), second)
	if err != nil {
		t.Fatal(err)
	}
	b := m.Busy()
	if err := b.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, c := range cpuSampledBusy {
		n := nodeAt(t, b, c.thread, c.path...)
		if n.SelfNs != 2*c.self || n.TotalNs != 2*c.total || len(n.Contribs) != 2 {
			t.Fatalf("level %d %v: self %d total %d, %d shares, want %d, %d, 2", c.thread, c.path, n.SelfNs, n.TotalNs,
				len(n.Contribs), 2*c.self, 2*c.total)
		}
		for _, x := range n.Contribs {
			if x.SelfNs != c.self || x.TotalNs != c.total {
				t.Errorf("level %d %v member %d: self %d total %d, want %d, %d", c.thread, c.path, x.Member,
					x.SelfNs, x.TotalNs, c.self, c.total)
			}
		}
	}
	for ti, want := range []int64{170, 90} {
		th := &b.Threads[ti]
		if th.TracedNs != 2*want || th.Members[0].TracedNs != want || th.Members[1].TracedNs != want {
			t.Errorf("level %d: traced %d, members %d and %d, want %d, %d, %d", ti, th.TracedNs,
				th.Members[0].TracedNs, th.Members[1].TracedNs, 2*want, want, want)
		}
	}
}

// unsampledThread is CPUSampled with thread 101 recorded without samples:
// the same script less its CPU steps.
func unsampledThread(notSampled string) *model.Profile {
	b := modeltest.NewBuilder("/bin/app")
	b.Period = 10
	p0 := b.Process(100, model.None, "", 0)
	b.Thread(p0, 100, 0, "", 0, nil, []modeltest.Step{
		modeltest.Enter(100, "main"), modeltest.CPU(4, ""),
		modeltest.PLT(5, "libc.so.6:read"), modeltest.CPU(2, ""), modeltest.Exit(500), modeltest.Exit(10),
	})
	b.Thread(p0, 101, 100, "main", 1, nil, []modeltest.Step{
		modeltest.Enter(3, "worker"), modeltest.PLT(5, "libc.so.6:usleep"), modeltest.Exit(300), modeltest.Exit(40),
	})
	b.P.Meta.CPUSamples = &model.CPUSamples{PeriodNs: 10, Samples: b.Samples, NotSampled: notSampled}
	return b.P
}

// A thread without any sample keeps its measured busy times when some
// threads could not be sampled (CPUSamples.NotSampled); when every
// thread was sampled, it ran less than a period on a CPU: no busy time.
func TestBusySampledKeepsUnsampledThreads(t *testing.T) {
	measured := unsampledThread("")
	measured.Meta.CPUSamples = nil
	want := measured.Busy().Threads[1]
	if want.TracedNs != 58 {
		t.Fatalf("measured busy time %d, want 58 (358ns less usleep's 300)", want.TracedNs)
	}
	for name, c := range map[string]struct {
		notSampled string
		want       model.Thread
	}{
		"some threads not sampled": {"perf_event_open: permission denied", want},
		"every thread sampled": {"", func() model.Thread {
			th := want
			th.TracedNs = 0
			th.Nodes = append([]model.Node(nil), want.Nodes...)
			for i := range th.Nodes {
				th.Nodes[i].SelfNs, th.Nodes[i].TotalNs = 0, 0
			}
			return th
		}()},
	} {
		t.Run(name, func(t *testing.T) {
			b := unsampledThread(c.notSampled).Busy()
			if err := b.Validate(); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(b.Threads[1], c.want) {
				t.Errorf("thread 101:\n got %+v\nwant %+v", b.Threads[1], c.want)
			}
			if got := b.Threads[0].TracedNs; got != 60 {
				t.Errorf("thread 100: traced %d, want 60 (its samples)", got)
			}
		})
	}
}

// In a merge of a sampled run with one that was not, each member of a
// composite thread keeps its own kind of busy time.
func TestBusySampledMixedComposite(t *testing.T) {
	unsampled := modeltest.CPUSampled()
	unsampled.Meta.CPUSamples = nil
	unsampled.Processes[0].Pid = 2
	for ti := range unsampled.Threads {
		for i := range unsampled.Threads[ti].Nodes {
			unsampled.Threads[ti].Nodes[i].SampledNs = 0
		}
	}
	wantMeasured := unsampled.Busy()
	m, err := merge.Merge(modeltest.CPUSampled(), unsampled)
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Meta.CPUSamples.NotSampled; got != "some runs were not sampled" {
		t.Fatalf("NotSampled %q", got)
	}
	b := m.Busy()
	if err := b.Validate(); err != nil {
		t.Fatal(err)
	}
	for ti, want := range []int64{170, 90} {
		th := &b.Threads[ti]
		var sampled, measured int64 = -1, -1
		for _, mb := range th.Members {
			if mb.Pid == 2 {
				measured = mb.TracedNs
			} else {
				sampled = mb.TracedNs
			}
		}
		if sampled != want || measured != wantMeasured.Threads[ti].TracedNs || th.TracedNs != sampled+measured {
			t.Errorf("level %d: traced %d, sampled member %d, measured member %d, want %d, %d and their sum",
				ti, th.TracedNs, sampled, measured, want, wantMeasured.Threads[ti].TracedNs)
		}
	}
	read := nodeAt(t, b, 0, "main", "libc.so.6:read")
	if len(read.Contribs) != 2 || read.Contribs[0].SelfNs+read.Contribs[1].SelfNs != 20 {
		t.Errorf("read: %+v, want 20ns sampled in one member, none measured in the other (a waiting call)", read.Contribs)
	}
}

// What prune folds away stays in the busy times: a kept ancestor's total
// and the thread's traced time are those of the unpruned profile, the
// dropped contexts' sampled time its DroppedNs; member by member in a
// composite thread.
func TestBusySampledPruned(t *testing.T) {
	second := modeltest.CPUSampled()
	second.Processes[0].Pid = 2
	merged, err := merge.Merge(modeltest.CPUSampled(), second)
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		p     *model.Profile
		times int64 // of the recorded numbers
	}{
		"recorded":  {modeltest.CPUSampled(), 1},
		"composite": {merged, 2},
	} {
		t.Run(name, func(t *testing.T) {
			pr, err := prune.Prune(c.p, prune.Options{Keep: regexp.MustCompile(`^fib$`)})
			if err != nil {
				t.Fatal(err)
			}
			if err := pr.Validate(); err != nil {
				t.Fatal(err)
			}
			b := pr.Busy()
			if err := b.Validate(); err != nil {
				t.Fatal(err)
			}
			main := nodeAt(t, b, 0, "main")
			// hash 30, read 20, spawn_workers' pthread_create 10
			if main.SelfNs != 40*c.times || main.DroppedNs != 60*c.times || main.TotalNs != 160*c.times {
				t.Errorf("main: self %d dropped %d total %d, want %d, %d, %d", main.SelfNs, main.DroppedNs, main.TotalNs,
					40*c.times, 60*c.times, 160*c.times)
			}
			root := nodeAt(t, b, 1)
			if root.DroppedNs != 90*c.times || len(b.Threads[1].Nodes) != 1 {
				t.Errorf("thread 101's root: dropped %d of %d nodes, want 90 of 1", root.DroppedNs, len(b.Threads[1].Nodes))
			}
			for ti, want := range []int64{170, 90} {
				th := &b.Threads[ti]
				if th.TracedNs != want*c.times {
					t.Errorf("thread %d: traced %d, want %d", ti, th.TracedNs, want*c.times)
				}
				for _, mb := range th.Members {
					if mb.TracedNs != want {
						t.Errorf("thread %d member %d: traced %d, want %d", ti, mb.Tid, mb.TracedNs, want)
					}
				}
			}
		})
	}
}
