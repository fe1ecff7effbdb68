package flame

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/profile-dev/profile/export"
	"github.com/profile-dev/profile/model"
)

// kind tells a function's frame from the frames that stand for no function.
type kind uint8

const (
	kindAll    kind = iota // the root, every thread together
	kindThread             // a thread, with Options.Threads
	kindFunc               // a function in a calling context (START included)
	kindPruned             // the self time of contexts removed by prune
)

// frame is one box of the graph: the CCT nodes of one path, summed over
// threads (or of one thread).
type frame struct {
	kind     kind
	fn       int    // function index, for kindFunc
	name     string // display name: the tooltip's, which search matches
	label    string // the frame's text when not name: a shortened function name
	sortName string // children are sorted by sortName, then num
	num      int
	// The summed vector of the CCT nodes the frame stands for.
	calls, recursive, inFlight, self, total int64
	width                                   int64 // in units of Options.Value
	kids                                    []*frame
}

// frameKey identifies a child of parent: a function or [pruned] under a
// frame, or a thread (by index) under the root.
type frameKey struct {
	parent *frame
	kind   kind
	id     int
}

// frames finds and makes the children of frames, all in one map.
type frames map[frameKey]*frame

// child is the frame k names, made by mk if new.
func (fs frames) child(k frameKey, mk func() *frame) *frame {
	if c, ok := fs[k]; ok {
		return c
	}
	c := mk()
	fs[k] = c
	k.parent.kids = append(k.parent.kids, c)
	return c
}

func (fs frames) funcChild(p *model.Profile, parent *frame, fn int, fullNames bool) *frame {
	return fs.child(frameKey{parent, kindFunc, fn}, func() *frame {
		name := p.FuncName(fn)
		f := &frame{kind: kindFunc, fn: fn, name: name, sortName: name, num: fn}
		if short := p.DisplayName(fn, fullNames); short != name {
			f.label = short
		}
		return f
	})
}

// text is what the frame shows: its label, else its name.
func (f *frame) text() string {
	if f.label != "" {
		return f.label
	}
	return f.name
}

// buildFrames merges the CCTs of the (member) threads ths into one tree of
// frames under "all", with widths set and children sorted by name.
func buildFrames(p *model.Profile, ths []model.ThreadView, opt Options) *frame {
	root := &frame{kind: kindAll, name: "all", fn: model.None}
	fs := frames{}
	var at []*frame // the frame of each node of the current thread
	for k, v := range ths {
		t := &p.Threads[v.Thread]
		top := root
		if opt.Threads {
			top = fs.child(frameKey{root, kindThread, k}, func() *frame {
				name := cmp.Or(v.Name, "thread")
				return &frame{kind: kindThread, fn: model.None, name: fmt.Sprintf("%s-%d", name, v.Tid),
					sortName: name, num: v.Tid}
			})
		}
		drawn := drawnNodes(p, v.ThreadRef, opt)
		at = at[:0]
		for ni := range t.Nodes {
			n := &t.Nodes[ni]
			if !drawn[ni] {
				at = append(at, nil)
				continue
			}
			var f *frame
			switch {
			case ni == 0:
				f = fs.funcChild(p, top, model.StartFunc, opt.FullNames)
			case n.Parent == 0: // START is left out of the paths
				f = fs.funcChild(p, top, n.Func, opt.FullNames)
			default:
				f = fs.funcChild(p, at[n.Parent], n.Func, opt.FullNames)
			}
			at = append(at, f)
			if v.Member != model.None {
				// A member of a composite thread has its own vector; in-flight
				// counts and pruned time are the whole node's only, as in the
				// call graph (model.Graph).
				vec, _ := p.NodeVec(v.ThreadRef, ni)
				f.calls += vec.Calls
				f.recursive += vec.RecursiveCalls
				f.self += vec.SelfNs
				f.total += vec.TotalNs
				continue
			}
			f.calls += n.Calls
			f.recursive += n.RecursiveCalls
			f.inFlight += n.InFlight
			f.self += n.SelfNs
			f.total += n.TotalNs
			if n.DroppedNs > 0 {
				pr := fs.child(frameKey{f, kindPruned, 0}, func() *frame {
					return &frame{kind: kindPruned, fn: model.None, name: export.PrunedFrame, sortName: export.PrunedFrame}
				})
				pr.self += n.DroppedNs
			}
		}
	}
	root.finish(opt.Value)
	return root
}

// drawnNodes tells which nodes of (member) thread r have frames: every
// node with something of its own to draw, and the callers of those. A
// context CPU samples alone made has nothing measured, so it is drawn only
// with busy times; a member draws only the contexts it reached.
func drawnNodes(p *model.Profile, r model.ThreadRef, opt Options) []bool {
	t := &p.Threads[r.Thread]
	sampled := opt.Busy && opt.Value != export.Calls
	drawn := make([]bool, len(t.Nodes))
	for ni := len(t.Nodes) - 1; ni >= 0; ni-- { // children follow their parents
		n := &t.Nodes[ni]
		if !drawn[ni] {
			if r.Member == model.None {
				drawn[ni] = n.DroppedNs != 0 || !n.SampleOnly(model.None) || sampled
			} else {
				_, drawn[ni] = p.NodeVec(r, ni)
			}
		}
		if drawn[ni] && ni > 0 {
			drawn[n.Parent] = true
		}
	}
	return drawn
}

// scopeThreads lists the (member) threads a flame graph draws: every
// thread whole without a scope (a composite thread's frames hold all its
// members), else the scope's, as the call graph takes them
// (model.Profile.ScopeThreads).
func scopeThreads(p *model.Profile, s model.Scope) []model.ThreadView {
	if s != (model.Scope{}) {
		return p.ScopeThreads(s)
	}
	out := make([]model.ThreadView, len(p.Threads))
	for ti := range p.Threads {
		t := &p.Threads[ti]
		out[ti] = model.ThreadView{ThreadRef: model.ThreadRef{Thread: ti, Member: model.None},
			Pid: p.Processes[t.Process].Pid, Tid: t.Tid, Name: t.Name, TracedNs: t.TracedNs}
	}
	return out
}

// finish sorts f's children and sets the widths of f and everything below
// it, bottom-up: a frame is at least its own value plus its children.
func (f *frame) finish(v export.Value) {
	var sum int64
	for _, c := range f.kids {
		c.finish(v)
		sum += c.width
	}
	slices.SortFunc(f.kids, func(a, b *frame) int {
		return cmp.Or(cmp.Compare(a.sortName, b.sortName), cmp.Compare(a.num, b.num))
	})
	switch v {
	case export.Calls:
		f.width = f.calls + sum
	case export.Self:
		f.width = f.self + sum
	default:
		f.width = max(f.total, f.self+sum)
	}
}
