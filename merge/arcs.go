package merge

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/profile-dev/profile/model"
)

// mergeArcs sums the counted calls (model.Thread.Arcs) of srcs by
// (caller, callee) of the output's functions, each arc split by output
// member as nodes are; nil when no source has any.
func mergeArcs(srcs []*source) ([]model.Arc, error) {
	var out []model.Arc
	for _, s := range srcs {
		for i, a := range s.t.Arcs {
			x := model.Arc{Caller: s.in.fn(a.Caller), Callee: s.in.fmap[a.Callee], Calls: a.Calls}
			if !s.in.composite {
				x.Contribs = []model.ArcContrib{{Member: s.members[0], Calls: a.Calls}}
				out = append(out, x)
				continue
			}
			if len(a.Contribs) == 0 {
				return nil, fmt.Errorf("composite thread %q arc %d has calls but no member contributions", s.t.Name, i)
			}
			x.Contribs = make([]model.ArcContrib, len(a.Contribs))
			for k, c := range a.Contribs {
				x.Contribs[k] = model.ArcContrib{Member: s.members[c.Member], Calls: c.Calls}
			}
			slices.SortFunc(x.Contribs, func(a, b model.ArcContrib) int { return cmp.Compare(a.Member, b.Member) })
			out = append(out, x)
		}
	}
	return model.SortArcs(out), nil
}
