// Package components computes component statistics (docs/components.md): the
// frames of every calling-context path are grouped into components, and time
// and calls are reported per component (flat) and per component path (the
// hierarchical component tree).
//
// A component is named by a rules file (entry functions, Rules) or, without
// rules, is a module: the executable or a shared library, named as the
// summary's modules table names it. Walking a path from its root, an entry
// function of a component starts that component, and the frames after it
// belong to it until an entry function of another component; frames before
// the first entry belong to Other. Without rules a frame belongs to its
// module. Consecutive frames of one component are one step of the component
// path.
//
// The root of every thread's path is START (the thread's time outside any
// traced function): it is a component of its own, the root of the tree.
//
// Times are the measured ones: a profile's CPU samples (record --sample)
// are not used, and a context they alone made (model.Node.SampleOnly),
// which has no measured number, starts no step.
//
// Compute is a pure function of the profile; Write* and DOT format the
// Report.
package components

import (
	"cmp"
	"errors"
	"slices"

	"github.com/profile-dev/profile/model"
)

// Format names the JSON layout of a Report.
const Format = "profile-components/1"

// Names of the pseudo-components.
const (
	Start = model.StartName // the threads' time outside any traced function
	Other = "Other"         // frames before a path's first entry function
)

// Report is the component statistics of a profile. Marshalled with
// encoding/json it is the document of docs/components.md.
type Report struct {
	Format   string `json:"format"`
	Mode     string `json:"mode"`      // "modules" or "rules"
	TracedNs int64  `json:"traced_ns"` // traced time of every thread: the base of the percentages
	// Times says what the times are: "wall" (measured) or "busy"
	// (model.Profile.Busy: waiting calls' time left out, or the CPU
	// samples' times); Compute says wall, a caller that gives it the busy
	// profile says busy.
	Times string `json:"times"`
	// Components is the flat statistics, by self time, largest first.
	Components []Stat `json:"components"`
	// Tree is the hierarchical statistics: START and the component paths
	// below it.
	Tree *Node `json:"tree"`
}

// Stat is one component's flat statistics.
type Stat struct {
	Name string `json:"name"`
	// Calls counts the entries into the component from another one (or
	// from START): the calls of its frames whose caller is elsewhere.
	Calls int64 `json:"calls"`
	// SelfNs is the self time of the frames the component holds.
	SelfNs int64 `json:"self_ns"`
	// DroppedNs is the self time of pruned contexts folded into those
	// frames (prune); SelfNs + DroppedNs of all components is TracedNs.
	DroppedNs int64 `json:"dropped_ns"`
	// TotalNs is the time inside the component and what it called,
	// counted once per outermost activation of the component on a path.
	TotalNs  int64   `json:"total_ns"`
	SelfPct  float64 `json:"self_pct"`
	TotalPct float64 `json:"total_pct"`
}

// Node is one component path of the tree: the component of its last step,
// with the numbers of the frames that step holds.
type Node struct {
	Stat
	// Children are the component paths one step longer, by total time,
	// largest first. A node's TotalNs is its SelfNs + DroppedNs plus its
	// children's TotalNs.
	Children []*Node `json:"children"`
}

// Compute groups the frames of p's calling contexts into components:
// rules' components, or modules when rules is nil.
func Compute(p *model.Profile, rules *Rules) (*Report, error) {
	if p == nil {
		return nil, errors.New("components: no profile")
	}
	r := &Report{Format: Format, Mode: "modules", Times: "wall"}
	if rules != nil {
		r.Mode = "rules"
	}
	comp := newNamer(p, rules)
	root := &Node{Stat: Stat{Name: Start}}
	for ti := range p.Threads {
		t := &p.Threads[ti]
		r.TracedNs += t.TracedNs
		addThread(root, t.Nodes, comp)
	}
	finish(root, r.TracedNs)
	r.Components = flat(root, r.TracedNs)
	r.Tree = root
	return r, nil
}

// addThread adds one thread's CCT to the tree: each frame goes to the
// tree node of its component path.
func addThread(root *Node, nodes []model.Node, comp *namer) {
	at := make([]*Node, len(nodes)) // CCT node -> tree node
	name := make([]string, len(nodes))
	for i := range nodes {
		n := &nodes[i]
		tn := root
		if i > 0 && n.DroppedNs == 0 && n.SampleOnly(model.None) {
			at[i], name[i] = at[n.Parent], name[n.Parent] // nothing measured
			continue
		}
		if i > 0 {
			name[i] = comp.of(n.Func, name[n.Parent])
			tn = at[n.Parent]
			if name[i] != tn.Name {
				tn = tn.child(name[i])
				tn.Calls += n.Calls
			}
		} else {
			name[i] = Start
		}
		at[i] = tn
		tn.SelfNs += n.SelfNs
		tn.DroppedNs += n.DroppedNs
	}
}

func (n *Node) child(name string) *Node {
	for _, c := range n.Children {
		if c.Name == name {
			return c
		}
	}
	c := &Node{Stat: Stat{Name: name}}
	n.Children = append(n.Children, c)
	return c
}

// finish sums the totals bottom-up, sets the percentages and sorts the
// children.
func finish(n *Node, traced int64) {
	n.TotalNs = n.SelfNs + n.DroppedNs
	for _, c := range n.Children {
		finish(c, traced)
		n.TotalNs += c.TotalNs
	}
	n.SelfPct, n.TotalPct = pct(n.SelfNs, traced), pct(n.TotalNs, traced)
	slices.SortFunc(n.Children, func(a, b *Node) int {
		return cmp.Or(cmp.Compare(b.TotalNs, a.TotalNs), cmp.Compare(a.Name, b.Name))
	})
	if n.Children == nil {
		n.Children = []*Node{}
	}
}

// flat sums the tree per component. A component's total counts only its
// outermost steps: a step below another step of the same component is
// already inside that one's total.
func flat(root *Node, traced int64) []Stat {
	idx := map[string]int{}
	var out []Stat
	active := map[string]int{}
	var walk func(n *Node)
	walk = func(n *Node) {
		i, ok := idx[n.Name]
		if !ok {
			out = append(out, Stat{Name: n.Name})
			i = len(out) - 1
			idx[n.Name] = i
		}
		s := &out[i]
		s.Calls += n.Calls
		s.SelfNs += n.SelfNs
		s.DroppedNs += n.DroppedNs
		if active[n.Name] == 0 {
			s.TotalNs += n.TotalNs
		}
		active[n.Name]++
		for _, c := range n.Children {
			walk(c)
		}
		active[n.Name]--
	}
	walk(root)
	for i := range out {
		out[i].SelfPct, out[i].TotalPct = pct(out[i].SelfNs, traced), pct(out[i].TotalNs, traced)
	}
	slices.SortFunc(out, func(a, b Stat) int {
		return cmp.Or(cmp.Compare(b.SelfNs, a.SelfNs), cmp.Compare(b.TotalNs, a.TotalNs), cmp.Compare(a.Name, b.Name))
	})
	return out
}

func pct(ns, base int64) float64 {
	if base <= 0 {
		return 0
	}
	return 100 * float64(ns) / float64(base)
}

// namer gives each frame its component, as the package comment says.
type namer struct {
	rules  *Rules
	module []string // function -> module name (modules mode)
	entry  []string // function -> component it is an entry of, "" if none (rules mode)
}

func newNamer(p *model.Profile, rules *Rules) *namer {
	c := &namer{rules: rules}
	if rules == nil {
		c.module = make([]string, len(p.Functions))
		for f, fn := range p.Functions {
			c.module[f] = p.ModuleName(fn.Module)
		}
		return c
	}
	c.entry = make([]string, len(p.Functions))
	for f, fn := range p.Functions {
		if f != model.StartFunc {
			c.entry[f] = rules.entryOf(fn.Name, p.ModuleName(fn.Module))
		}
	}
	return c
}

// of is the component of a frame of function f whose caller's frame is in
// component caller.
func (c *namer) of(f int, caller string) string {
	if c.rules == nil {
		return c.module[f]
	}
	if e := c.entry[f]; e != "" {
		return e
	}
	if caller == Start {
		return Other
	}
	return caller
}
