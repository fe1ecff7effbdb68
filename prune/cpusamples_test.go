package prune

import (
	"regexp"
	"testing"

	"github.com/profile-dev/profile/merge"
	"github.com/profile-dev/profile/model"
	"github.com/profile-dev/profile/model/modeltest"
)

// sampled is the sampled time of thread t (member m, or None for the
// whole thread), what prune folded away included.
func sampled(t *model.Thread, m int) int64 {
	var s int64
	for i := range t.Nodes {
		n := &t.Nodes[i]
		if m == model.None {
			s += n.SampledNs + n.DroppedSampledNs
		}
		for _, c := range n.Contribs {
			if c.Member == m {
				s += c.SampledNs + c.DroppedSampledNs
			}
		}
	}
	return s
}

// A dropped context's sampled time goes to its nearest kept ancestor, as
// its self time does: every (member) thread's sampled time is unchanged,
// pruned once or twice, recorded or composite.
func TestPruneKeepsSampledTime(t *testing.T) {
	second := modeltest.CPUSampled()
	second.Processes[0].Pid = 2
	composite, err := merge.Merge(modeltest.CPUSampled(), second)
	if err != nil {
		t.Fatal(err)
	}
	for name, p := range map[string]*model.Profile{"recorded": modeltest.CPUSampled(), "composite": composite} {
		for _, opts := range []struct {
			name string
			opt  []Options
		}{
			{"total 20%", []Options{{Threshold: 0.20}}},
			{"keep fib", []Options{{Keep: regexp.MustCompile(`^fib$`)}}},
			// the second drops main, which holds what the first dropped
			{"keep main, then fib", []Options{{Keep: regexp.MustCompile(`^(main|worker)$`)}, {Keep: regexp.MustCompile(`^fib$`)}}},
		} {
			t.Run(name+"/"+opts.name, func(t *testing.T) {
				out := p
				for _, opt := range opts.opt {
					if out, err = Prune(out, opt); err != nil {
						t.Fatal(err)
					}
					if err := out.Validate(); err != nil {
						t.Fatal(err)
					}
				}
				if len(nodesOf(out)) >= len(nodesOf(p)) {
					t.Fatal("nothing pruned")
				}
				for ti := range p.Threads {
					a, b := &p.Threads[ti], &out.Threads[ti]
					if got, want := sampled(b, model.None), sampled(a, model.None); got != want {
						t.Errorf("thread %d: %d ns sampled, want %d", ti, got, want)
					}
					for m := range a.Members {
						if got, want := sampled(b, m), sampled(a, m); got != want {
							t.Errorf("thread %d member %d: %d ns sampled, want %d", ti, m, got, want)
						}
					}
				}
				if err := out.Busy().Validate(); err != nil {
					t.Errorf("busy: %v", err)
				}
			})
		}
	}
}

func nodesOf(p *model.Profile) []model.Node {
	var out []model.Node
	for _, t := range p.Threads {
		out = append(out, t.Nodes...)
	}
	return out
}

// A counted function's contexts made by its samples alone do not make it
// timed: a time threshold does not judge it (its measured time is 0), its
// calls do.
func TestPruneSampleOnlyContexts(t *testing.T) {
	for _, c := range []struct {
		name string
		opt  Options
		kept bool
	}{
		{"total 5%", Options{Threshold: 0.05}, true},
		{"self 1ns", Options{MinNs: 1, Metric: Self}, true},
		{"min calls 12", Options{MinCalls: 12}, false}, // hash: 11 counted calls
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err := Prune(modeltest.CPUSampled(), c.opt)
			if err != nil {
				t.Fatal(err)
			}
			var contexts int
			for _, th := range out.Threads {
				for _, n := range th.Nodes {
					if out.FuncName(n.Func) == "hash" {
						contexts++
					}
				}
			}
			if kept := contexts == 3; kept != c.kept || contexts != 0 && contexts != 3 {
				t.Errorf("%d contexts of hash kept, want all 3: %v", contexts, c.kept)
			}
		})
	}
}
