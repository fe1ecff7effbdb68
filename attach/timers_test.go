package attach

import (
	"testing"
	"time"

	"github.com/profile-dev/profile/model"
)

// funcNodes returns the CCT nodes of the function named name (display name).
func funcNodes(p *model.Profile, name string) (nodes []model.Node, threads []int) {
	for ti, t := range p.Threads {
		for _, n := range t.Nodes[1:] {
			if p.FuncName(n.Func) == name {
				nodes = append(nodes, n)
				threads = append(threads, ti)
			}
		}
	}
	return nodes, threads
}

func TestTimers(t *testing.T) {
	forEachProbe(t, func(t *testing.T, _ Options) {
		for _, name := range []string{"recursion", "mutual", "blocking"} {
			t.Run(name, func(t *testing.T) {
				r, _ := recordWorkload(t, name, defaultOptions(t))
				p := r.Profile
				for _, th := range p.Threads {
					var self int64
					for _, n := range th.Nodes {
						self += n.SelfNs
						if n.TotalNs > th.TracedNs {
							t.Errorf("tid %d: %s total %d > traced %d", th.Tid, p.FuncName(n.Func), n.TotalNs, th.TracedNs)
						}
					}
					if d := self - th.TracedNs; d > th.TracedNs/100 || -d > th.TracedNs/100 {
						t.Errorf("tid %d: self times add up to %d, traced %d", th.Tid, self, th.TracedNs)
					}
				}
			})
		}
		t.Run("usleep carries the sleep", func(t *testing.T) {
			r, _ := recordWorkload(t, "blocking", defaultOptions(t))
			p := r.Profile
			const sleep = int64(50 * time.Millisecond)
			naps, _ := funcNodes(p, "nap")
			if len(naps) != 1 || naps[0].TotalNs < sleep {
				t.Fatalf("nap nodes = %+v, want one with total >= 50ms", naps)
			}
			// The usleep node under nap holds the time.
			found := false
			for _, th := range p.Threads {
				for _, n := range th.Nodes[1:] {
					if p.Functions[n.Func].Name == "usleep" && p.FuncName(th.Nodes[n.Parent].Func) == "nap" {
						found = true
						if n.TotalNs < sleep || n.Calls != 1 {
							t.Errorf("usleep under nap = %+v", n)
						}
					}
				}
			}
			if !found {
				t.Fatal("no libc usleep node under nap")
			}
		})
	})
}

func TestStopsPerCall(t *testing.T) {
	opt := defaultOptions(t)
	opt.Probes = ProbesTrap // stops are the trap probe's
	r, _ := recordWorkload(t, "recursion", opt)
	s := r.Stats
	if s.TracedCalls == 0 {
		t.Fatal("no calls traced")
	}
	if per := float64(s.Stops) / float64(s.TracedCalls); per > 2.05 {
		t.Fatalf("stops per traced call = %.3f (%d stops, %d calls), want <= 2.05", per, s.Stops, s.TracedCalls)
	}
}

// Frames abandoned by exceptions and longjmp close when the stack pointer
// passes them: a callee's total never exceeds its caller's.
func TestUnusualControlFlowClosesFrames(t *testing.T) {
	forEachProbe(t, func(t *testing.T, _ Options) {
		r, _ := recordWorkload(t, "unusual", defaultOptions(t))
		p := r.Profile
		total := func(name string) int64 {
			nodes, _ := funcNodes(p, name)
			var s int64
			for _, n := range nodes {
				s += n.TotalNs
			}
			return s
		}
		for _, c := range [][2]string{
			{"exc::thrower_a(int)", "exception_test()"},
			{"exc::thrower_c(int)", "exception_test()"},
			{"ljmp_a", "longjmp_test"},
			{"ljmp_c", "longjmp_test"},
			{"on_sigusr1", "signal_test"},
			{"exception_test()", "main"},
			{"longjmp_test", "main"},
		} {
			inner, outer := total(c[0]), total(c[1])
			if inner == 0 || inner > outer {
				t.Errorf("%s total %d, %s total %d: an abandoned frame stayed open", c[0], inner, c[1], outer)
			}
		}
		for _, th := range p.Threads {
			for _, n := range th.Nodes {
				if n.TotalNs > p.Meta.DurationNs || n.SelfNs > p.Meta.DurationNs {
					t.Errorf("%s: duration beyond the run's wall time", p.FuncName(n.Func))
				}
			}
		}
	})
}
