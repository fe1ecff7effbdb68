package instrument

import (
	"fmt"
	"sort"
	"strings"

	"github.com/profile-dev/profile/model"
)

// observedIndex holds what a profile saw of indirect calls: by caller
// ("module:name"), the functions it called through an indirect call, with
// how many calls.
type observedIndex struct {
	targets  map[string][]Observed
	ran      map[string]bool
	buildIDs map[string]string // module base name -> build id
}

// UseProfile makes later Discover calls attach to each indirect call site
// the targets the profile p (a run of the same program) saw its function
// call indirectly. The calls of a function are counted per calling
// function, not per call instruction, so a function with several indirect
// sites gets the same set on each.
func (d *Discoverer) UseProfile(p *model.Profile) {
	ix := &observedIndex{targets: map[string][]Observed{}, ran: map[string]bool{}, buildIDs: map[string]string{}}
	for i, m := range p.Modules {
		if i > 0 && m.BuildID != "" {
			ix.buildIDs[p.ModuleName(i)] = m.BuildID
		}
	}
	ref := func(f int) FuncRef {
		fn := p.Functions[f]
		return FuncRef{Module: p.ModuleName(fn.Module), Name: fn.Name, Main: p.FuncName(f) == fn.Name}
	}
	g := p.Graph(model.Scope{})
	for _, n := range g.Nodes {
		if n.Key.Func != model.StartFunc {
			ix.ran[ref(n.Key.Func).Key()] = true
		}
	}
	for _, e := range g.Edges {
		if e.Kind != model.EdgeCall || e.IndirectCalls == 0 {
			continue
		}
		from, to := g.Nodes[e.From].Key.Func, g.Nodes[e.To].Key.Func
		if from == model.StartFunc {
			continue
		}
		key := ref(from).Key()
		ix.targets[key] = addObserved(ix.targets[key], Observed{Func: ref(to), Calls: e.IndirectCalls})
	}
	for _, obs := range ix.targets {
		sort.Slice(obs, func(i, j int) bool {
			if obs[i].Calls != obs[j].Calls {
				return obs[i].Calls > obs[j].Calls
			}
			return obs[i].Func.Key() < obs[j].Func.Key()
		})
	}
	d.observed = ix
}

// addObserved adds o, merging it with the same function's entry (a
// function can be a graph node more than once: as a thread's root).
func addObserved(obs []Observed, o Observed) []Observed {
	for i := range obs {
		if obs[i].Func.Key() == o.Func.Key() {
			obs[i].Calls += o.Calls
			return obs
		}
	}
	return append(obs, o)
}

// attachObserved gives the indirect sites of the expanded c the targets
// the profile saw.
func (d *Discoverer) attachObserved(c *Callee, sites []*Callee) {
	ix := d.observed
	if ix == nil {
		return
	}
	key := c.Func.Key()
	if !ix.ran[key] {
		c.Notes = append(c.Notes, "not in the profile (not traced, or never ran)")
		return
	}
	if mod, err := d.module(c.Func.Module); err == nil && mod.BuildID != "" {
		if id := ix.buildIDs[c.Func.Module]; id != "" && id != mod.BuildID {
			d.warnOnce("build "+c.Func.Module, fmt.Sprintf("the profile was recorded from another build of %s (build id %s, not %s): its observed targets may not match this code",
				c.Func.Module, id, mod.BuildID))
		}
	}
	obs := ix.targets[key]
	for _, s := range sites {
		s.Observed = append([]Observed(nil), obs...)
		s.ObservedKnown = true
		s.ObservedShared = len(sites) > 1
	}
	if len(sites) == 0 && len(obs) > 0 {
		var names []string
		for _, o := range obs {
			names = append(names, o.Func.Display(true))
		}
		c.Notes = append(c.Notes, "the profile saw indirect calls of "+strings.Join(names, ", ")+" but no indirect call site was found")
	}
}
