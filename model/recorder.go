package model

// Recorder keeps one thread's CCT with the recursion-aware timers
// (docs/design.md, Recursion). The engine feeds it entries and returns with
// timestamps; tests feed it scripted events. Times are nanoseconds on any
// monotonic clock.
type Recorder struct {
	tree  *Tree
	stack []frame // stack[0] is START
	// active[fn] counts fn's open activations (recursion): indexed
	// by function, as a map costs a hash at every call.
	active []int32
	start  int64
	end    int64
	done   bool
	// last is the latest time the recorder was given and closed the
	// latest a frame closed: a thread's events come from two clocks (the
	// tracer's at a stop, the target's time-stamp counter in a ring, read
	// on different CPUs), so a time earlier than the last one is taken as
	// the last one. Then no frame lasts less than its callees and the self
	// times add up to the traced time exactly (TestRecorderTimesAddUp).
	last   int64
	closed int64
}

type frame struct {
	node  int
	fn    int
	entry int64
	child int64
	via   int // the node of a counted caller it was entered below (EnterVia), 0 if none
}

// NewRecorder starts a thread's accounting at time start.
func NewRecorder(start int64) *Recorder {
	return &Recorder{
		tree:   NewTree(),
		stack:  []frame{{node: 0, fn: StartFunc, entry: start}},
		start:  start,
		last:   start,
		closed: start,
	}
}

// Enter opens an activation of fn at time now.
func (r *Recorder) Enter(fn int, now int64, kind CallKind) {
	r.EnterVia(None, fn, now, kind)
}

// EnterVia opens an activation of fn at time now called by via (None:
// by the innermost open activation), a counted function, which has no
// activations: fn's context goes below via's context below the innermost
// open activation, made with no calls if new (as Sample makes it), and
// via's context gets fn's time as its total.
func (r *Recorder) EnterVia(via, fn int, now int64, kind CallKind) {
	top, under := r.stack[len(r.stack)-1], 0
	if via > StartFunc && via != top.fn {
		under = r.tree.Child(top.node, via)
	}
	n := r.push(fn, now, under)
	nd := &r.tree.Nodes[n]
	nd.Calls++
	if r.active[fn] > 1 {
		nd.RecursiveCalls++
	}
	switch kind {
	case KindDirect:
		nd.DirectCalls++
	case KindIndirect:
		nd.IndirectCalls++
	case KindPLT:
		nd.PLTCalls++
	}
}

// EnterInFlight opens an activation that was already running when tracing
// began: it is timed from now but not counted as a call.
func (r *Recorder) EnterInFlight(fn int, now int64) {
	n := r.push(fn, now, 0)
	r.tree.Nodes[n].InFlight++
}

// at is now, or the last time given if now is earlier.
func (r *Recorder) at(now int64) int64 {
	if now < r.last {
		return r.last
	}
	r.last = now
	return now
}

// push opens an activation of fn below the innermost one's context or,
// if via is not 0, below that node (EnterVia).
func (r *Recorder) push(fn int, now int64, via int) int {
	now = r.at(now)
	parent := r.stack[len(r.stack)-1].node
	if via != 0 {
		parent = via
	}
	n := r.tree.Child(parent, fn)
	r.stack = append(r.stack, frame{node: n, fn: fn, entry: now, via: via})
	if fn >= len(r.active) {
		r.active = append(r.active, make([]int32, fn+1-len(r.active))...)
	}
	r.active[fn]++
	return n
}

// Exit closes the innermost open activation at time now. It reports false
// when no activation is open.
func (r *Recorder) Exit(now int64) bool {
	if len(r.stack) <= 1 {
		return false
	}
	f := r.stack[len(r.stack)-1]
	r.stack = r.stack[:len(r.stack)-1]
	now = r.at(now)
	r.closed = now
	// Times never go back (at), so a frame lasts at least as long as the
	// callees it closed: dur >= f.child.
	dur := now - f.entry
	self := dur - f.child
	nd := &r.tree.Nodes[f.node]
	nd.SelfNs += self
	r.active[f.fn]--
	if r.active[f.fn] == 0 {
		nd.TotalNs += dur
	}
	if f.via != 0 {
		r.tree.Nodes[f.via].TotalNs += dur
	}
	r.stack[len(r.stack)-1].child += dur
	return true
}

// Hold takes out of the open activations the time from..to during which
// the thread was held stopped by the tracer (setting up probes): it is
// not the thread's time. The innermost activation open at from loses it
// from its self time; one opened during the hold (an in-flight frame
// rebuilt at attach) is timed from to. A hold cannot begin before the
// last frame closed (the tracer read its clock before draining events the
// thread made before it stopped): it begins then. It returns the time
// taken out of the thread's traced time.
func (r *Recorder) Hold(from, to int64) int64 {
	from = max(from, r.closed)
	if r.done || to <= from {
		return 0
	}
	shift := func(t *int64) {
		switch {
		case *t <= from:
			*t += to - from
		case *t < to:
			*t = to
		}
	}
	start := r.start
	shift(&r.start)
	for i := range r.stack {
		shift(&r.stack[i].entry)
	}
	shift(&r.last)
	shift(&r.closed)
	return r.start - start
}

// Sample adds ns of sampled CPU time to the innermost open activation's
// context or, when fn (the traced function the sample's instruction lies
// in; None: none) is another function (a counted one, which has no
// frames), to fn's context below it, made with no calls if new.
func (r *Recorder) Sample(fn int, ns int64) {
	top := r.stack[len(r.stack)-1]
	n := top.node
	if fn > StartFunc && fn != top.fn {
		n = r.tree.Child(n, fn)
	}
	r.tree.Nodes[n].SampledNs += ns
}

// Last is the latest time the recorder was given (held time included).
func (r *Recorder) Last() int64 { return r.last }

// Depth is the number of open activations.
func (r *Recorder) Depth() int { return len(r.stack) - 1 }

// Stack lists the functions of the open activations, outermost first.
func (r *Recorder) Stack() []int {
	out := make([]int, 0, len(r.stack)-1)
	for _, f := range r.stack[1:] {
		out = append(out, f.fn)
	}
	return out
}

// Top is the function of the innermost open activation, StartFunc if none.
func (r *Recorder) Top() int { return r.stack[len(r.stack)-1].fn }

// Finish closes every open activation at time end and returns the CCT and
// the thread's traced time. START's self time is what no traced function
// took, so a thread's self times add up to its traced time exactly.
func (r *Recorder) Finish(end int64) (nodes []Node, tracedNs int64) {
	if !r.done {
		end = max(end, r.last)
		for r.Exit(end) {
		}
		root := &r.tree.Nodes[0]
		root.SelfNs = end - r.start - r.stack[0].child
		r.end = end
		r.done = true
	}
	return r.tree.Nodes, r.end - r.start
}

// Snapshot returns the CCT and traced time as if the thread finished at
// end, leaving the recorder running: the engine saves a profile before a
// crash it is about to let through.
func (r *Recorder) Snapshot(end int64) (nodes []Node, tracedNs int64) {
	if r.done {
		return r.Finish(end)
	}
	c := &Recorder{
		tree:   &Tree{Nodes: append([]Node(nil), r.tree.Nodes...), kids: r.tree.kids},
		stack:  append([]frame(nil), r.stack...),
		active: append([]int32(nil), r.active...),
		start:  r.start,
		last:   r.last,
		closed: r.closed,
	}
	// Closing frames only touches existing nodes: sharing kids is safe.
	return c.Finish(end)
}
