package calib

import (
	"fmt"
	"slices"

	"github.com/profile-dev/profile/model"
)

// Inner names batch k's empty callee.
func Inner(k int) string { return fmt.Sprintf("calib_inner_%d", k) }

// Cost reads what one call costs from p, a profile of the calibration
// program run with calls calls a batch under probe kind kind (as
// model.ProbeKind names it: "inline", "trap"), which each batch's callee
// must have got. The median batch is the cost, so that a batch the
// scheduler preempted does not count.
func Cost(p *model.Profile, kind string, calls int) (model.ProbeCost, error) {
	got := map[string]model.ProbeKind{}
	for f, fn := range p.Functions {
		got[p.FuncName(f)] = fn.Probe
	}
	var in, out []int64
	for k := range Batches {
		inner := Inner(k)
		if got[inner].String() != kind {
			return model.ProbeCost{}, fmt.Errorf("%s got a %q probe", inner, got[inner])
		}
		for _, t := range p.Threads {
			for _, n := range t.Nodes {
				if n.Parent == model.None || p.FuncName(n.Func) != inner || n.Calls != int64(calls) {
					continue
				}
				in = append(in, n.SelfNs/n.Calls)
				out = append(out, t.Nodes[n.Parent].SelfNs/n.Calls)
			}
		}
	}
	if len(in) != Batches {
		return model.ProbeCost{}, fmt.Errorf("%d of %d batches traced", len(in), Batches)
	}
	return model.ProbeCost{InNs: median(in), OutNs: median(out)}, nil
}

func median(v []int64) int64 {
	slices.Sort(v)
	return v[len(v)/2]
}
