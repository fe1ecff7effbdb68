package modeltest

import "github.com/profile-dev/profile/model"

// Sampled is Sample as an import from a sampling profiler would have it:
// the same times (recursion-aware totals), no call counts of any kind,
// and a Go CPU profile's sampling (cpu nanoseconds at 100 Hz) in Meta.
func Sampled() *model.Profile {
	p := Sample()
	p.Meta.Mode = "import"
	p.Meta.Sampling = &model.Sampling{Type: "cpu", Unit: "nanoseconds", PeriodType: "cpu", PeriodUnit: "nanoseconds",
		Period: 10_000_000}
	for ti := range p.Threads {
		for ni := range p.Threads[ti].Nodes {
			n := &p.Threads[ti].Nodes[ni]
			n.Calls, n.RecursiveCalls, n.DirectCalls, n.IndirectCalls, n.PLTCalls, n.InFlight = 0, 0, 0, 0, 0, 0
		}
	}
	return p
}
