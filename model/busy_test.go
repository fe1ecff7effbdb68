package model_test

import (
	"reflect"
	"slices"
	"testing"

	"github.com/profile-dev/profile/merge"
	"github.com/profile-dev/profile/model"
	"github.com/profile-dev/profile/model/modeltest"
)

// Busy takes out exactly the waiting time Breakdown finds, node by node,
// recorded and composite threads alike, and leaves its input alone.
func TestBusyTakesOutTheWaitingTime(t *testing.T) {
	second := waitingProfile()
	second.Processes[0].Pid = 2
	merged, err := merge.Merge(waitingProfile(), second)
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		p          *model.Profile
		wantTraced int64
	}{
		"recorded":  {waitingProfile(), 110},
		"composite": {merged, 220},
		"sample":    {modeltest.Sample(), 1735 - 500},
	} {
		t.Run(name, func(t *testing.T) {
			before := deepCopy(t, tc.p)
			b := tc.p.Busy()
			if !reflect.DeepEqual(tc.p, before) {
				t.Fatal("Busy changed its input")
			}
			if err := b.Validate(); err != nil {
				t.Fatal(err)
			}
			g := tc.p.Graph(model.Scope{})
			bd := tc.p.Breakdown(g, model.Scope{})
			gb := b.Graph(model.Scope{})
			if gb.TracedNs != g.TracedNs-bd.WaitNs || gb.TracedNs != tc.wantTraced {
				t.Errorf("busy traced %d, want %d (traced %d - waiting %d)", gb.TracedNs, tc.wantTraced, g.TracedNs, bd.WaitNs)
			}
			for i, n := range g.Nodes {
				j, ok := gb.NodeIndex(n.Key)
				if !ok {
					t.Fatalf("node %s gone", tc.p.FuncName(n.Key.Func))
				}
				m := gb.Nodes[j]
				w := bd.Nodes[i]
				if m.Calls != n.Calls || m.SelfNs != n.SelfNs-w.SelfNs || (i > 0 && m.TotalNs != n.TotalNs-w.TotalNs) {
					t.Errorf("%s: calls %d self %d total %d, want %d, %d-%d, %d-%d", tc.p.FuncName(n.Key.Func),
						m.Calls, m.SelfNs, m.TotalNs, n.Calls, n.SelfNs, w.SelfNs, n.TotalNs, w.TotalNs)
				}
			}
			for i, th := range b.Threads {
				var sum int64
				for _, m := range th.Members {
					sum += m.TracedNs
				}
				if len(th.Members) > 0 && sum != th.TracedNs {
					t.Errorf("thread %d: members' traced time %d, thread's %d", i, sum, th.TracedNs)
				}
			}
		})
	}
}

// deepCopy copies what Busy could change: threads, their nodes and
// contributions, and members.
func deepCopy(t *testing.T, p *model.Profile) *model.Profile {
	t.Helper()
	c := *p
	c.Threads = slices.Clone(p.Threads)
	for i := range c.Threads {
		th := &c.Threads[i]
		th.Members = slices.Clone(th.Members)
		th.Nodes = slices.Clone(th.Nodes)
		for j := range th.Nodes {
			th.Nodes[j].Contribs = slices.Clone(th.Nodes[j].Contribs)
		}
	}
	return &c
}

// An imported CPU profile's values are CPU samples already: Busy keeps
// them, usleep's 500ns among them (measured, Sample's usleep would lose
// them as a waiting call's).
func TestBusyKeepsImportedSamples(t *testing.T) {
	p := modeltest.Sampled()
	b := p.Busy()
	var usleep int64
	for ti, th := range b.Threads {
		for ni, n := range th.Nodes {
			if !reflect.DeepEqual(n, p.Threads[ti].Nodes[ni]) {
				t.Fatalf("thread %d node %d changed: %+v, was %+v", th.Tid, ni, n, p.Threads[ti].Nodes[ni])
			}
			if b.FuncName(n.Func) == "libc.so.6:usleep" {
				usleep += n.SelfNs
			}
		}
	}
	if usleep != 500 {
		t.Errorf("usleep's self %dns, want its 500ns of samples", usleep)
	}
	if wait := modeltest.Sample().Busy(); wait.Threads[0].TracedNs == modeltest.Sample().Threads[0].TracedNs {
		t.Error("Sample's busy time lost nothing of usleep's wait")
	}
}
