// Package detail keeps full detail of the calls that turn out to be
// interesting (entry and exit times, argument registers, return value) with
// their ancestors, and prunes everything else as the program runs
// (docs/detail.md). It consumes the session's call events, so it serves both
// probe kinds; it knows nothing of probes or ptrace.
package detail

import "github.com/profile-dev/profile/model"

// Rule says which calls of the selected functions are kept.
type Rule struct {
	SlowNs int64 // lasted at least this long (0: any)
	If     *Cond // and this holds (nil: always)
	Limit  int   // trees kept per thread, the oldest dropped beyond (0: no limit)
	// Gated: the probes judged the rule already and gave the arguments of
	// the calls that may meet it only (the inline stubs' side records):
	// a selected call without them, unless in flight, is not kept.
	Gated bool
}

// judged tells whether call o is known not to be kept without judging
// it again: not selected, too short, or gated without its arguments.
func (r *Rule) judged(o *open, now int64) bool {
	return !o.selected || now-o.start < r.SlowNs || (r.Gated && o.flags&(model.DetailArgs|model.DetailInFlight) == 0)
}

// keeps tells whether a selected call that lasted dur is kept; args nil:
// its arguments are not known.
func (r *Rule) keeps(dur int64, args *argRegs, ret uint64, returned bool) bool {
	if dur < r.SlowNs {
		return false
	}
	if r.If == nil {
		return true
	}
	if args == nil {
		if !r.If.OnReturn() {
			// Not known: the inline stubs send a call's arguments only
			// when the condition held at its entry.
			return false
		}
		args = &argRegs{}
	}
	return r.If.Holds(&args.regs, ret, returned)
}

// maxElems bounds a thread's array: open frames and the kept calls inside
// the outermost open selected call. Beyond it a call that would be kept
// is dropped with what it holds, and counted (Lost).
const maxElems = 1 << 20

// Thread follows one thread's calls with an array of
// call elements and a stack of open calls. An entry appends a placeholder
// (the zero element: nothing allocated per call) and pushes its index and
// entry data on the stack. At the exit, an uninteresting call's
// placeholder (and everything after it) is dropped; a kept one appends its
// exit element and moves the persist index past it, so that every call
// still open (its ancestors) is kept at its own exit too. When the
// outermost open selected call is done, what the array holds from its
// entry on is a complete tree: it is cut out, with the open calls above it
// as its ancestors, and the array shrinks back to their placeholders.
type Thread struct {
	rule  *Rule
	elems []elem
	// exits are the kept calls' exit elements, in the order of elems;
	// an entry placeholder notes how many there were at its entry, so
	// that pruning it drops those after it too.
	exits []model.DetailCall
	stack []open
	argv  []argRegs // argv[i]: open call i's arguments, if its flags say so
	// ancs[i] is open call i's record as the ancestor of trees cut while
	// it ran, shared by them and completed at its exit, if hasAnc.
	ancs     []*model.DetailCall
	persist  int // elements before it are kept
	selected int // open calls of selected functions
	trees    []tree
	dropped  int64
	lost     int64
}

// elem is an entry placeholder, -1 - (the number of exits before it), or
// a kept call's exit element, its index in exits: four bytes a call,
// where the element itself would take a hundred and twenty.
type elem int32

func placeholder(exits int) elem { return elem(-1 - exits) }

// exitsBefore is how many exit elements precede placeholder e.
func (e elem) exitsBefore() int { return int(-1 - e) }

// open is a call on the thread's stack: small and without pointers, as
// every call pushes one (its arguments and ancestor record, rarer, are in
// argv and ancs).
type open struct {
	start    int64
	fn       int32
	idx      int32             // its placeholder in elems
	flags    model.DetailFlags // DetailArgs, DetailInFlight
	selected bool
	hasAnc   bool
}

// argRegs are a call's argument registers, n of them its parameters (-1:
// unknown).
type argRegs struct {
	regs [6]uint64
	n    int
}

// tree is a cut tree: its ancestors (shared, completed when they end) and
// its calls, in pre-order with depths from 0.
type tree struct {
	anc   []*model.DetailCall
	calls []model.DetailCall
}

// NewThread follows a thread's calls under rule r.
func NewThread(r *Rule) *Thread { return &Thread{rule: r} }

// Enter opens a call of fn at now; selected tells whether fn is one of the
// functions recorded in detail.
func (t *Thread) Enter(fn int, now int64, selected bool) { t.push(fn, now, selected, 0) }

// EnterInFlight opens a call already running when tracing began (attach,
// a forked child's copy of its parent's calls): known from now on.
func (t *Thread) EnterInFlight(fn int, now int64, selected bool) {
	t.push(fn, now, selected, model.DetailInFlight)
}

// push appends the open call in place, field by field: a whole struct
// copied in costs its wide load of the narrow stores just made (a failed
// store forward), a third of the time a pruned call takes.
func (t *Thread) push(fn int, now int64, selected bool, flags model.DetailFlags) {
	t.stack = append(t.stack, open{})
	o := &t.stack[len(t.stack)-1]
	o.start, o.fn, o.idx, o.flags, o.selected = now, int32(fn), int32(len(t.elems)), flags, selected
	t.elems = append(t.elems, placeholder(len(t.exits)))
	if selected {
		t.selected++
	}
}

// SetArgsAt gives open call i (0: the outermost) its argument registers,
// nargs of them its parameters (-1: unknown); kept for selected functions
// only. They may come at its entry or when it ends (inline probes under
// --slow or --detail-if); a call that trees already hold as their
// ancestor gets them there too.
func (t *Thread) SetArgsAt(i int, args *[6]uint64, nargs int) {
	if i < 0 || i >= len(t.stack) || !t.stack[i].selected {
		return
	}
	if len(t.argv) < len(t.stack) {
		t.argv = append(t.argv, make([]argRegs, len(t.stack)-len(t.argv))...)
	}
	t.argv[i] = argRegs{*args, nargs}
	o := &t.stack[i]
	o.flags |= model.DetailArgs
	if o.hasAnc {
		anc := t.ancs[i]
		anc.Args, anc.NArgs = *args, nargs
		anc.Flags |= model.DetailArgs
	}
}

// args are open call i's arguments, nil if it has none.
func (t *Thread) args(i int) *argRegs {
	if t.stack[i].flags.Has(model.DetailArgs) {
		return &t.argv[i]
	}
	return nil
}

// Depth is the number of open calls.
func (t *Thread) Depth() int { return len(t.stack) }

// Exit closes the innermost open call at now: returned with rax ret, or
// left (longjmp, exception, tail call) when returned is false.
func (t *Thread) Exit(now int64, ret uint64, returned bool) {
	if n := len(t.stack) - 1; n >= 0 {
		// Most calls: nothing kept in them, not kept themselves, no tree
		// holding them as an ancestor. Pruned here, as exit would.
		o := &t.stack[n]
		if i := int(o.idx); !o.hasAnc && t.persist <= i && (t.rule.judged(o, now) || !t.rule.keeps(now-o.start, t.args(n), ret, returned)) {
			if o.selected {
				t.selected--
			}
			t.truncate(i)
			t.stack = t.stack[:n]
			return
		}
	}
	t.exit(now, ret, returned, 0)
}

func (t *Thread) exit(now int64, ret uint64, returned bool, extra model.DetailFlags) {
	n := len(t.stack)
	if n == 0 {
		return
	}
	o := &t.stack[n-1]
	idx := int(o.idx)
	flags := o.flags | extra
	if returned {
		flags |= model.DetailReturned
	} else {
		ret = 0
	}
	if o.hasAnc {
		anc := t.ancs[n-1]
		anc.EndNs, anc.Ret, anc.Flags = now, ret, flags
		t.ancs[n-1] = nil
	}
	a := t.args(n - 1)
	keep := !t.rule.judged(o, now) && t.rule.keeps(now-o.start, a, ret, returned)
	if keep {
		flags |= model.DetailKept
	}
	if o.selected {
		t.selected--
	}
	switch {
	case !keep && t.persist <= idx:
		t.truncate(idx) // nothing in it kept: pruned
	case len(t.elems) >= maxElems:
		t.truncate(idx)
		t.persist = min(t.persist, idx)
		t.lost++
	default:
		t.elems = append(t.elems, elem(len(t.exits)))
		t.exits = append(t.exits, model.DetailCall{Func: int(o.fn), StartNs: o.start,
			EndNs: now, Ret: ret, Flags: flags})
		if a != nil {
			c := &t.exits[len(t.exits)-1]
			c.Args, c.NArgs = a.regs, a.n
		}
		t.persist = len(t.elems)
		if o.selected && t.selected == 0 {
			t.cut(idx, n-1)
		}
	}
	t.stack = t.stack[:n-1]
}

// truncate drops elems[i:] (i a placeholder's) and their exits.
func (t *Thread) truncate(i int) {
	t.exits = t.exits[:t.elems[i].exitsBefore()]
	t.elems = t.elems[:i]
}

// cut moves the complete tree starting at elems[from] out of the array;
// the calls open below stack index depth are its ancestors.
func (t *Thread) cut(from, depth int) {
	tr := tree{anc: make([]*model.DetailCall, depth)}
	for i := range depth {
		o := &t.stack[i]
		if !o.hasAnc {
			anc := &model.DetailCall{Func: int(o.fn), StartNs: o.start, Flags: o.flags | model.DetailOpen}
			if a := t.args(i); a != nil {
				anc.Args, anc.NArgs = a.regs, a.n
			}
			if len(t.ancs) < len(t.stack) {
				t.ancs = append(t.ancs, make([]*model.DetailCall, len(t.stack)-len(t.ancs))...)
			}
			t.ancs[i], o.hasAnc = anc, true
		}
		tr.anc[i] = t.ancs[i]
	}
	var open []int // indices into tr.calls of calls whose exit is to come
	for _, e := range t.elems[from:] {
		if e < 0 {
			open = append(open, len(tr.calls))
			tr.calls = append(tr.calls, model.DetailCall{Depth: len(open) - 1})
			continue
		}
		i := open[len(open)-1]
		open = open[:len(open)-1]
		d := tr.calls[i].Depth
		tr.calls[i] = t.exits[e]
		tr.calls[i].Depth = d
	}
	t.truncate(from)
	// What stays are the placeholders of the open ancestors, which the
	// tree holds now: none of them is kept by the array any more.
	t.persist = 0
	t.trees = append(t.trees, tr)
	if t.rule.Limit > 0 && len(t.trees) > t.rule.Limit {
		t.trees[0] = tree{}
		t.trees = t.trees[1:]
		t.dropped++
	}
}

// Finish ends the thread at now: its open calls end there, innermost
// first, each judged by the rule as it stands (a call still running that
// has lasted --slow is kept). It returns the thread's trees.
func (t *Thread) Finish(now int64) (trees []model.DetailTree, dropped int64) {
	for len(t.stack) > 0 {
		t.exit(now, 0, false, model.DetailOpen)
	}
	return t.Trees(now)
}

// Trees are the thread's trees so far, oldest first, and how many older
// ones were dropped; ancestors still running end at now.
func (t *Thread) Trees(now int64) ([]model.DetailTree, int64) {
	out := make([]model.DetailTree, 0, len(t.trees))
	for _, tr := range t.trees {
		calls := make([]model.DetailCall, 0, len(tr.anc)+len(tr.calls))
		for d, a := range tr.anc {
			c := *a
			c.Depth = d
			if c.Flags.Has(model.DetailOpen) {
				c.EndNs = now
			}
			calls = append(calls, c)
		}
		for _, c := range tr.calls {
			c.Depth += len(tr.anc)
			calls = append(calls, c)
		}
		out = append(out, model.DetailTree{Calls: calls})
	}
	return out, t.dropped
}

// Lost counts calls that would have been kept but for the array's bound.
func (t *Thread) Lost() int64 { return t.lost }
