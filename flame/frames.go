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

// buildFrames merges the threads' CCTs into one tree of frames under "all",
// with widths set and children sorted by name.
func buildFrames(p *model.Profile, opt Options) *frame {
	root := &frame{kind: kindAll, name: "all", fn: model.None}
	fs := frames{}
	var at []*frame // the frame of each node of the current thread
	for ti := range p.Threads {
		t := &p.Threads[ti]
		top := root
		if opt.Threads {
			top = fs.child(frameKey{root, kindThread, ti}, func() *frame {
				name := t.Name
				if name == "" {
					name = "thread"
				}
				return &frame{kind: kindThread, fn: model.None, name: fmt.Sprintf("%s-%d", name, t.Tid),
					sortName: name, num: t.Tid}
			})
		}
		at = at[:0]
		parent := make([]bool, len(t.Nodes))
		for ni := 1; ni < len(t.Nodes); ni++ {
			parent[t.Nodes[ni].Parent] = true
		}
		for ni := range t.Nodes {
			n := &t.Nodes[ni]
			if !parent[ni] && n.DroppedNs == 0 && n.SampleOnly(model.None) && (!opt.Busy || opt.Value == export.Calls) {
				// made by CPU samples alone: nothing measured to draw
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
