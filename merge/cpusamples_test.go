package merge

import (
	"testing"

	"github.com/profile-dev/profile/model"
	"github.com/profile-dev/profile/model/modeltest"
)

// cpuRun is modeltest.CPUSampled as process pid, sampled every period
// (0: not sampled at all) with the given kernel mode and NotSampled.
func cpuRun(pid int, period int64, kernel bool, notSampled string) *model.Profile {
	p := modeltest.CPUSampled()
	p.Processes[0].Pid = pid
	if period == 0 {
		p.Meta.CPUSamples = nil
		for ti := range p.Threads {
			for i := range p.Threads[ti].Nodes {
				p.Threads[ti].Nodes[i].SampledNs = 0
			}
		}
		return p
	}
	c := p.Meta.CPUSamples
	c.PeriodNs, c.WithKernel, c.NotSampled = period, kernel, notSampled
	return p
}

// The runs' CPU samples: counts summed, the period kept while they agree
// (0: mixed), the kernel only if every run sampled it, the reasons some
// threads were not sampled joined, and a run without samples said so.
func TestMergeCPUSamples(t *testing.T) {
	one := *modeltest.CPUSampled().Meta.CPUSamples // 26 samples, 2 in the kernel, 1 in the probes
	for _, c := range []struct {
		name string
		ins  []*model.Profile
		want *model.CPUSamples
	}{
		{"same period", []*model.Profile{cpuRun(1, 10, true, ""), cpuRun(2, 10, true, "")},
			&model.CPUSamples{PeriodNs: 10, Samples: 2 * one.Samples, Kernel: 4, InProbes: 2, WithKernel: true}},
		{"periods differ", []*model.Profile{cpuRun(1, 10, true, ""), cpuRun(2, 20, true, ""), cpuRun(3, 10, true, "")},
			&model.CPUSamples{Samples: 3 * one.Samples, Kernel: 6, InProbes: 3, WithKernel: true}},
		{"one user mode only", []*model.Profile{cpuRun(1, 10, true, ""), cpuRun(2, 10, false, "")},
			&model.CPUSamples{PeriodNs: 10, Samples: 2 * one.Samples, Kernel: 4, InProbes: 2}},
		{"some threads not sampled", []*model.Profile{cpuRun(1, 10, true, "b; a"), cpuRun(2, 10, true, "c"), cpuRun(3, 10, true, "a")},
			&model.CPUSamples{PeriodNs: 10, Samples: 3 * one.Samples, Kernel: 6, InProbes: 3, WithKernel: true, NotSampled: "a; b; c"}},
		{"one run not sampled", []*model.Profile{cpuRun(1, 0, false, ""), cpuRun(2, 10, true, "")},
			&model.CPUSamples{PeriodNs: 10, Samples: one.Samples, Kernel: 2, InProbes: 1, WithKernel: true,
				NotSampled: "some runs were not sampled"}},
		{"none sampled", []*model.Profile{cpuRun(1, 0, false, ""), cpuRun(2, 0, false, "")}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := Merge(c.ins...)
			if err != nil {
				t.Fatal(err)
			}
			if err := m.Validate(); err != nil {
				t.Fatal(err)
			}
			got := m.Meta.CPUSamples
			if (got == nil) != (c.want == nil) || got != nil && *got != *c.want {
				t.Fatalf("CPUSamples %+v, want %+v", got, c.want)
			}
			// any order, any grouping
			rev, err := Merge(c.ins[len(c.ins)-1], mustMerge(t, runsOf(c.ins[:len(c.ins)-1])...))
			if err != nil {
				t.Fatal(err)
			}
			equal(t, "reversed and grouped", m, rev)
		})
	}
}

func runsOf(ps []*model.Profile) []Run {
	out := make([]Run, len(ps))
	for i, p := range ps {
		out[i] = Run{Profile: p}
	}
	return out
}

// A node's sampled time is its runs' summed, split by member like its
// times: no sampled time lost or made up.
func TestMergeSampledNodes(t *testing.T) {
	a, b := cpuRun(1, 10, true, ""), cpuRun(2, 10, true, "")
	m := mustMerge(t, Run{Profile: a}, Run{Profile: b})
	for ti := range m.Threads {
		th := &m.Threads[ti]
		var sum, members [2]int64 // by run: a is member 0 (pid 1), b member 1
		for i := range th.Nodes {
			n := &th.Nodes[i]
			for _, c := range n.Contribs {
				members[c.Member] += c.SampledNs
			}
			sum[0] += n.SampledNs
		}
		want := sampledSum(&a.Threads[ti])
		if members[0] != want || members[1] != want || sum[0] != 2*want {
			t.Errorf("level %d: members' sampled %v, node sum %d, want %d each, %d", ti, members, sum[0], want, 2*want)
		}
		if th.Members[0].Pid != 1 || th.Members[1].Pid != 2 {
			t.Fatalf("level %d members %+v", ti, th.Members)
		}
	}
	// a context only the samples made keeps no calls, its time summed
	hash := -1
	for f, fn := range m.Functions {
		if fn.Name == "hash" {
			hash = f
		}
	}
	found := 0
	for i, n := range m.Threads[0].Nodes {
		if n.Func != hash {
			continue
		}
		found++
		if n.Calls != 0 || n.SampledNs != 60 || !n.SampleOnly(model.None) {
			t.Errorf("node %d (hash below main): %+v, want 60ns sampled, no calls", i, n)
		}
	}
	if found != 1 {
		t.Errorf("%d contexts of hash at level 0, want 1", found)
	}
}

func sampledSum(t *model.Thread) int64 {
	var s int64
	for i := range t.Nodes {
		s += t.Nodes[i].SampledNs
	}
	return s
}
