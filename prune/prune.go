// Package prune drops the functions of a profile that are under a threshold
// and reconnects the orphans they leave (docs/design.md, Offline analytics),
// or keeps only interesting functions and their ancestors (--keep).
//
// Decisions are made per function, on the function-level values of the
// whole profile: a function's self time, total time or calls summed over
// every calling context of every thread (the node vectors of the derived
// call graph, model.Profile.Graph, summed over a function's keys). Coverage
// is that value over the profile's total traced time (for the calls metric:
// over all calls). Then every thread's CCT is rewritten: a dropped node
// vanishes, its self time (and any time already dropped below it) goes to
// the DroppedNs of its nearest kept ancestor (START is always kept), and
// its kept descendants re-attach to that ancestor with Node.Elided set. A
// re-attached node meets the ancestor's existing child of the same function,
// if any: the two merge (numbers summed, member contributions summed,
// subtrees merged recursively, Elided if either was).
//
// With Keep, a node survives only if its function's display name
// (model.Profile.FuncName) matches and the function passes the other
// options (an interesting call), or if it is an ancestor, on the CCT path,
// of an interesting call. Ancestors are kept whatever their own values:
// they are the context of the interesting calls.
//
// A function only counted (record --counted: calls in Thread.Arcs, no
// context, no time measured) is judged on its calls alone: by MinCalls,
// and by Threshold under the Calls metric; a time threshold cannot judge
// a time never measured. Its arcs follow the rules of arcs.go. The
// contexts CPU samples alone made for it (model.Node.SampleOnly) do not
// make it timed.
//
// CPU samples (model.Node.SampledNs) do not decide: functions are judged
// on their measured values. They are kept as times are: a dropped
// context's sampled time (and what was dropped below it) goes to the
// DroppedSampledNs of its nearest kept ancestor, member by member in a
// composite thread, so that each (member) thread's sampled time is
// unchanged.
//
// The function and module tables are kept whole (unused entries are valid);
// Meta, processes and thread descriptions are copied unchanged.
package prune

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/profile-dev/profile/model"
)

// Metric is the value a threshold applies to.
type Metric int

// Metrics. Total is the zero value: pruning by total time keeps hot paths
// whole, the way gprof2dot's node threshold does.
const (
	Total Metric = iota // total (inclusive, recursion-aware) time
	Self                // self time
	Calls               // calls (in-flight activations count as calls)
)

func (m Metric) String() string {
	switch m {
	case Total:
		return "total"
	case Self:
		return "self"
	case Calls:
		return "calls"
	}
	return "metric(" + strconv.Itoa(int(m)) + ")"
}

// ParseMetric parses "self", "total" or "calls".
func ParseMetric(s string) (Metric, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "total":
		return Total, nil
	case "self":
		return Self, nil
	case "calls":
		return Calls, nil
	}
	return 0, fmt.Errorf("bad metric %q: want self, total or calls", s)
}

// Options select what to drop. The zero value drops nothing.
type Options struct {
	// Threshold drops functions whose coverage (value / total traced time,
	// or calls / all calls for the Calls metric) is under this fraction.
	Threshold float64
	// MinNs drops functions whose value is under this many nanoseconds
	// (time metrics only).
	MinNs int64
	// Metric is the value Threshold and MinNs apply to.
	Metric Metric
	// MinCalls drops functions called fewer times (in-flight activations
	// count as calls).
	MinCalls int64
	// Keep, if set, keeps only matching functions and their ancestors.
	Keep *regexp.Regexp
}

// ParseThreshold parses a threshold: a percentage of coverage ("1%",
// "0.5%") returned as a fraction, a duration ("5ms", "250us", "2s")
// returned in nanoseconds, or "0".
func ParseThreshold(s string) (fraction float64, ns int64, err error) {
	t := strings.TrimSpace(s)
	if t == "0" {
		return 0, 0, nil
	}
	if num, ok := strings.CutSuffix(t, "%"); ok {
		v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, 0, badThreshold(s)
		}
		if v < 0 || v > 100 {
			return 0, 0, fmt.Errorf("bad threshold %q: a percentage must be between 0%% and 100%%", s)
		}
		return v / 100, 0, nil
	}
	d, err := time.ParseDuration(t)
	if err != nil {
		return 0, 0, badThreshold(s)
	}
	if d < 0 {
		return 0, 0, fmt.Errorf("bad threshold %q: a duration must not be negative", s)
	}
	return 0, int64(d), nil
}

func badThreshold(s string) error {
	return fmt.Errorf("bad threshold %q: want a percentage like 1%% or a duration like 5ms", s)
}

// Check reports options Prune refuses, so that a command line can be
// rejected before any profile is read.
func (o *Options) Check() error {
	switch {
	case math.IsNaN(o.Threshold) || o.Threshold < 0 || o.Threshold > 1:
		return fmt.Errorf("threshold %v: want a fraction between 0 and 1", o.Threshold)
	case o.MinNs < 0:
		return fmt.Errorf("threshold %dns: must not be negative", o.MinNs)
	case o.MinCalls < 0:
		return fmt.Errorf("min calls %d: must not be negative", o.MinCalls)
	case o.Metric < Total || o.Metric > Calls:
		return fmt.Errorf("unknown metric %d", o.Metric)
	case o.MinNs > 0 && o.Metric == Calls:
		return fmt.Errorf("a duration threshold needs a time metric (self or total), not calls")
	}
	return nil
}

// funcValue is a function's values summed over all its contexts.
type funcValue struct {
	calls, self, total int64
	// counted: the function has counted calls (Thread.Arcs) and no
	// context, so no time was measured for it.
	counted bool
}

// Values returns each function's (calls, self ns, total ns) summed over
// every context of every thread, in-flight activations and counted calls
// counted as calls.
func values(p *model.Profile) (vals []funcValue, tracedNs, calls int64) {
	vals = make([]funcValue, len(p.Functions))
	timed := make([]bool, len(p.Functions))
	for ti := range p.Threads {
		t := &p.Threads[ti]
		tracedNs += t.TracedNs
		for i := range t.Nodes {
			n := &t.Nodes[i]
			v := &vals[n.Func]
			v.calls += n.Calls + n.InFlight
			v.self += n.SelfNs
			v.total += n.TotalNs
			timed[n.Func] = timed[n.Func] || !n.SampleOnly(model.None)
		}
		for _, a := range t.Arcs {
			vals[a.Callee].calls += a.Calls
		}
	}
	for f := range vals {
		vals[f].counted = vals[f].calls > 0 && !timed[f]
	}
	for _, v := range vals {
		calls += v.calls
	}
	return vals, tracedNs, calls
}

// passes decides, per function, whether it survives the thresholds.
func passes(p *model.Profile, opt *Options) []bool {
	vals, traced, calls := values(p)
	ok := make([]bool, len(p.Functions))
	for f, v := range vals {
		if f == model.StartFunc {
			ok[f] = true
			continue
		}
		if v.counted && opt.Metric != Calls {
			// a time threshold cannot judge a time never measured
			ok[f] = v.calls >= opt.MinCalls
			continue
		}
		val, base := v.total, traced
		switch opt.Metric {
		case Self:
			val = v.self
		case Calls:
			val, base = v.calls, calls
		}
		keep := v.calls >= opt.MinCalls && val >= opt.MinNs
		if opt.Threshold > 0 && float64(val) < opt.Threshold*float64(base) {
			keep = false
		}
		ok[f] = keep
	}
	return ok
}

// Prune returns a copy of p with the functions opt drops removed from
// every CCT and their orphans reconnected; see the package doc.
func Prune(p *model.Profile, opt Options) (*model.Profile, error) {
	if err := opt.Check(); err != nil {
		return nil, fmt.Errorf("prune: %w", err)
	}
	if err := checkInput(p); err != nil {
		return nil, fmt.Errorf("prune: %w", err)
	}
	ok := passes(p, &opt)
	var match []bool
	if opt.Keep != nil {
		match = make([]bool, len(p.Functions))
		for f := range p.Functions {
			match[f] = f != model.StartFunc && ok[f] && opt.Keep.MatchString(p.FuncName(f))
		}
	}
	out := &model.Profile{
		Meta:      cloneMeta(p.Meta),
		Modules:   slices.Clone(p.Modules),
		Functions: slices.Clone(p.Functions),
	}
	if p.Processes != nil {
		out.Processes = make([]model.Process, len(p.Processes))
		for i, pr := range p.Processes {
			pr.Argv = slices.Clone(pr.Argv)
			out.Processes[i] = pr
		}
	}
	if p.Threads != nil {
		out.Threads = make([]model.Thread, len(p.Threads))
	}
	var kept, ctx, present []bool
	if match != nil {
		ctx, present = make([]bool, len(p.Functions)), make([]bool, len(p.Functions))
	}
	for ti := range p.Threads {
		t := p.Threads[ti]
		t.Members = slices.Clone(t.Members)
		var marked []bool // with Keep: where t made interesting counted calls (arcs.go)
		if match != nil && arcContexts(&t, match, ctx) {
			marked = ctx
		}
		kept = keptNodes(t.Nodes, ok, match, marked, kept)
		if marked != nil {
			clear(marked)
		}
		t.Nodes = rewrite(t.Nodes, kept)
		t.Arcs = pruneArcs(&p.Threads[ti], t.Nodes, ok, match, present)
		out.Threads[ti] = t
	}
	return out, nil
}

func cloneMeta(m model.Meta) model.Meta {
	m.Command = slices.Clone(m.Command)
	m.Filters = slices.Clone(m.Filters)
	m.Excludes = slices.Clone(m.Excludes)
	m.Libs = slices.Clone(m.Libs)
	m.Sources = slices.Clone(m.Sources)
	m.Warnings = slices.Clone(m.Warnings)
	if m.Crash != nil {
		c := *m.Crash
		c.Stack = slices.Clone(c.Stack)
		m.Crash = &c
	}
	return m
}

// keptNodes marks the nodes of one CCT that survive. Without Keep a node
// survives when its function passes; with Keep when it is an interesting
// call (match), a context of the thread's interesting counted calls (ctx,
// nil if none) or an ancestor of either. The root always survives.
func keptNodes(nodes []model.Node, ok, match, ctx []bool, buf []bool) []bool {
	kept := slices.Grow(buf[:0], len(nodes))[:len(nodes)]
	if match == nil {
		for i := range nodes {
			kept[i] = ok[nodes[i].Func]
		}
	} else {
		clear(kept)
		for i := len(nodes) - 1; i > 0; i-- { // children follow parents
			if kept[i] || match[nodes[i].Func] || ctx != nil && ctx[nodes[i].Func] {
				kept[i] = true
				kept[nodes[i].Parent] = true
			}
		}
	}
	kept[0] = true
	return kept
}

// rewrite builds the pruned CCT: kept nodes in input order, each attached
// to its nearest kept ancestor, merged with a same-function sibling there.
func rewrite(nodes []model.Node, kept []bool) []model.Node {
	out := make([]model.Node, 0, countKept(kept))
	at := make([]int32, len(nodes)) // input node -> its output node, or its nearest kept ancestor's
	kids := make(map[uint64]int32, cap(out))
	for i := range nodes {
		n := &nodes[i]
		if i == 0 {
			r := *n
			r.Contribs = slices.Clone(n.Contribs)
			out = append(out, r)
			continue
		}
		pa := at[n.Parent]
		if !kept[i] {
			at[i] = pa
			out[pa].DroppedNs += n.SelfNs + n.DroppedNs
			dropSampled(&out[pa], n)
			continue
		}
		elided := n.Elided || !kept[n.Parent]
		k := uint64(pa)<<32 | uint64(uint32(n.Func))
		if o, dup := kids[k]; dup {
			at[i] = o
			add(&out[o], n)
			out[o].Elided = out[o].Elided || elided
			continue
		}
		o := int32(len(out))
		kids[k] = o
		at[i] = o
		c := *n
		c.Parent = int(pa)
		c.Elided = elided
		c.Contribs = slices.Clone(n.Contribs)
		out = append(out, c)
	}
	return out
}

func countKept(kept []bool) int {
	n := 0
	for _, k := range kept {
		if k {
			n++
		}
	}
	return n
}

// add merges node n's numbers and member contributions into o.
func add(o *model.Node, n *model.Node) {
	o.Calls += n.Calls
	o.RecursiveCalls += n.RecursiveCalls
	o.SelfNs += n.SelfNs
	o.TotalNs += n.TotalNs
	o.DirectCalls += n.DirectCalls
	o.IndirectCalls += n.IndirectCalls
	o.PLTCalls += n.PLTCalls
	o.InFlight += n.InFlight
	o.DroppedNs += n.DroppedNs
	o.SampledNs += n.SampledNs
	o.DroppedSampledNs += n.DroppedSampledNs
	if len(n.Contribs) == 0 {
		return
	}
	merged := make([]model.Contrib, 0, len(o.Contribs)+len(n.Contribs))
	a, b := o.Contribs, n.Contribs
	for len(a) > 0 || len(b) > 0 {
		switch {
		case len(b) == 0 || len(a) > 0 && a[0].Member < b[0].Member:
			merged, a = append(merged, a[0]), a[1:]
		case len(a) == 0 || b[0].Member < a[0].Member:
			merged, b = append(merged, b[0]), b[1:]
		default:
			c := a[0]
			c.Calls += b[0].Calls
			c.RecursiveCalls += b[0].RecursiveCalls
			c.SelfNs += b[0].SelfNs
			c.TotalNs += b[0].TotalNs
			c.SampledNs += b[0].SampledNs
			c.DroppedSampledNs += b[0].DroppedSampledNs
			merged, a, b = append(merged, c), a[1:], b[1:]
		}
	}
	o.Contribs = merged
}

// dropSampled folds the sampled time of dropped node n (its own and what
// was dropped below it) into o's DroppedSampledNs, member by member: a
// member with no share of o yet gets one holding only that.
func dropSampled(o, n *model.Node) {
	o.DroppedSampledNs += n.SampledNs + n.DroppedSampledNs
	for _, c := range n.Contribs {
		x := c.SampledNs + c.DroppedSampledNs
		if x == 0 {
			continue
		}
		k, ok := slices.BinarySearchFunc(o.Contribs, c.Member, func(a model.Contrib, m int) int { return a.Member - m })
		if !ok {
			o.Contribs = slices.Insert(o.Contribs, k, model.Contrib{Member: c.Member})
		}
		o.Contribs[k].DroppedSampledNs += x
	}
}

// checkInput checks what pruning relies on, so that a malformed profile is
// an error, never a panic. Profiles are meant to be valid (as model.Read
// returns them); the full Validate is left to the caller.
func checkInput(p *model.Profile) error {
	if len(p.Functions) == 0 {
		return fmt.Errorf("malformed profile: no START function")
	}
	for i, fn := range p.Functions {
		if fn.Module < 0 || fn.Module >= len(p.Modules) {
			return fmt.Errorf("malformed profile: function %d: module %d out of range", i, fn.Module)
		}
	}
	for ti := range p.Threads {
		t := &p.Threads[ti]
		if len(t.Nodes) == 0 || t.Nodes[0].Func != model.StartFunc || t.Nodes[0].Parent != model.None {
			return fmt.Errorf("malformed profile: thread %d: node 0 must be the START root", ti)
		}
		for i := 1; i < len(t.Nodes); i++ {
			n := &t.Nodes[i]
			if n.Parent < 0 || n.Parent >= i || n.Func <= model.StartFunc || n.Func >= len(p.Functions) {
				return fmt.Errorf("malformed profile: thread %d node %d: parent or function out of range", ti, i)
			}
		}
		for i, a := range t.Arcs {
			if a.Callee <= model.StartFunc || a.Callee >= len(p.Functions) ||
				a.Caller != model.None && (a.Caller <= model.StartFunc || a.Caller >= len(p.Functions)) {
				return fmt.Errorf("malformed profile: thread %d arc %d: caller or callee out of range", ti, i)
			}
		}
	}
	return nil
}
