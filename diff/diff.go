// Package diff compares two profiles (a base and a new run) function by
// function and edge by edge: calls, self and total time on each side, the
// change and the relative change. Gates (gate.go) turn the comparison into
// a verdict for CI; Report and its writers present it as a table,
// markdown or JSON (docs/diff.md).
//
// Functions are matched by identity, model.ByBaseName: module base name
// and symbol, so that two builds in different directories line up. The
// numbers of a function are its function-level graph node (model.Graph)
// summed over nesting levels, as summary counts them; those of an edge are
// the graph edges between the two functions, of one kind. A function or
// edge present in one profile only has zeros on the other side.
package diff

import (
	"cmp"
	"errors"
	"fmt"
	"math"

	"github.com/profile-dev/profile/model"
)

// Status tells on which sides a function or edge is.
type Status uint8

// Statuses.
const (
	Both    Status = iota // in both profiles
	Added                 // only in the new profile
	Removed               // only in the base profile
)

func (s Status) String() string { return [...]string{"both", "added", "removed"}[s] }

// Delta is one number on both sides and its change.
type Delta struct {
	Base, New, Delta int64
	// RelPct is the change in percent of Base: +Inf when Base is 0 and
	// New is not, 0 when both are 0.
	RelPct float64
}

func delta(base, new int64) Delta {
	d := Delta{Base: base, New: new, Delta: new - base}
	switch {
	case base != 0:
		d.RelPct = 100 * float64(d.Delta) / float64(base)
	case new != 0:
		d.RelPct = math.Inf(1)
	}
	return d
}

// perCallDelta is the time t per call on both sides (0 on a side without
// calls), in whole nanoseconds; the relative change is the exact
// quotients', so that rounding a short function's few nanoseconds makes
// no change of its own.
func perCallDelta(t, calls Delta) Delta {
	b, n := quot(t.Base, calls.Base), quot(t.New, calls.New)
	d := Delta{Base: int64(math.Round(b)), New: int64(math.Round(n))}
	d.Delta = d.New - d.Base
	switch {
	case b != 0:
		d.RelPct = 100 * (n - b) / b
	case n != 0:
		d.RelPct = math.Inf(1)
	}
	return d
}

func quot(t, calls int64) float64 {
	if calls == 0 {
		return 0
	}
	return float64(t) / float64(calls)
}

// timeSize is the size of the change of time t as what the noise floor
// is compared with (noise.go): |t.Delta|, or with perCall the change per
// call (exact) times the calls of the side with more: what the change
// costs or saves in a run.
func timeSize(t, calls Delta, perCall bool) float64 {
	if !perCall {
		return math.Abs(float64(t.Delta))
	}
	return math.Abs(quot(t.New, calls.New)-quot(t.Base, calls.Base)) * float64(max(calls.Base, calls.New))
}

// timeBase is t's base in the same terms as timeSize, timeNew its new
// value.
func timeBase(t, calls Delta, perCall bool) float64 {
	return asTime(t.Base, calls.Base, max(calls.Base, calls.New), perCall)
}

func timeNew(t, calls Delta, perCall bool) float64 {
	return asTime(t.New, calls.New, max(calls.Base, calls.New), perCall)
}

func asTime(t, calls, most int64, perCall bool) float64 {
	if !perCall {
		return float64(t)
	}
	return quot(t, calls) * float64(most)
}

// Function is one function's change.
type Function struct {
	Name    string // symbol
	Module  string // module base name; "" for START
	Display string // name, "module:name" for a library function; in full: gates and sorting go by it
	Short   string // Display shortened (model.Profile.ShortFuncName), for the tables
	Status  Status
	Calls   Delta
	Self    Delta // ns
	Total   Delta // ns; START's total is the traced time
}

// ID is the function's identity.
func (f *Function) ID() model.FuncID { return model.FuncID{Module: f.Module, Name: f.Name} }

// Edge is one (caller, callee, kind) edge's change.
type Edge struct {
	Caller, Callee               model.FuncID
	CallerDisplay, CalleeDisplay string // as Function.Display
	CallerShort, CalleeShort     string // as Function.Short
	Kind                         model.EdgeKind
	Status                       Status
	Calls                        Delta
	Total                        Delta // ns
}

// Side describes one of the two profiles.
type Side struct {
	Exe        string
	Command    []string
	Mode       string
	DurationNs int64
	TracedNs   int64
	Partial    bool
	Values     string // model.Meta.Values: exact or sampled
	Sampled    bool
	Times      string // TimesWall, TimesBusySampled or TimesBusyMeasured
}

// What a side's times are.
const (
	TimesWall         = "wall"                          // measured, waiting included
	TimesBusySampled  = "busy (CPU samples)"            // model.Profile.Busy of a profile with CPU samples
	TimesBusyMeasured = "busy (waiting calls left out)" // model.Profile.Busy of one without
)

// Result is the comparison of two profiles. Functions and Edges are in
// canonical order (by display name); Report sorts and cuts them.
type Result struct {
	Base, New Side
	Functions []Function
	Edges     []Edge
	index     map[model.FuncID]int
}

// counts are one side's numbers of a function or edge.
type counts struct {
	present            bool
	calls, self, total int64
}

type edgeKey struct {
	from, to int // FuncMap numbers
	kind     model.EdgeKind
}

// CompareBusy compares the busy times of base and newer
// (model.Profile.Busy), as summary and render show them: their CPU
// samples' times where they have them, else their measured times less
// the time blocked in waiting calls.
func CompareBusy(base, newer *model.Profile) (*Result, error) {
	if base == nil || newer == nil {
		return nil, errors.New("diff: no profile")
	}
	r, err := Compare(base.Busy(), newer.Busy())
	if err != nil {
		return nil, err
	}
	r.Base.Times, r.New.Times = busyTimes(base), busyTimes(newer)
	return r, nil
}

func busyTimes(p *model.Profile) string {
	if p.Meta.BusySampled() {
		return TimesBusySampled
	}
	return TimesBusyMeasured
}

// Compare compares base with newer, their measured (wall) times. It fails
// only when their numbers are not the same measure (traced against
// sampled values).
func Compare(base, newer *model.Profile) (*Result, error) {
	if base == nil || newer == nil {
		return nil, errors.New("diff: no profile")
	}
	if err := model.CompatibleValues(&base.Meta, &newer.Meta); err != nil {
		return nil, fmt.Errorf("diff: %w", err)
	}
	fm := model.NewFuncMap(model.ByBaseName)
	var funcs [2][]counts
	edges := map[edgeKey]*[2]counts{}
	var edgeOrder []edgeKey
	display, short := map[int]string{}, map[int]string{} // by FuncMap number, the new profile's first
	var sides [2]Side
	for s, p := range []*model.Profile{base, newer} {
		nums := fm.Add(p)
		g := p.Graph(model.Scope{})
		sides[s] = side(p, g)
		funcs[s] = make([]counts, len(fm.IDs))
		for _, n := range g.Nodes {
			num := nums[n.Key.Func]
			c := &funcs[s][num]
			c.present = true
			c.calls += n.Calls
			c.self += n.SelfNs
			c.total += n.TotalNs
			if _, ok := display[num]; !ok || s == 1 {
				display[num], short[num] = p.FuncName(n.Key.Func), p.ShortFuncName(n.Key.Func)
			}
		}
		funcs[s][model.StartFunc].total = g.TracedNs
		for _, e := range g.Edges {
			k := edgeKey{nums[g.Nodes[e.From].Key.Func], nums[g.Nodes[e.To].Key.Func], e.Kind}
			ec := edges[k]
			if ec == nil {
				ec = new([2]counts)
				edges[k] = ec
				edgeOrder = append(edgeOrder, k)
			}
			ec[s].present = true
			ec[s].calls += e.Calls
			ec[s].total += e.TotalNs
		}
	}
	r := &Result{Base: sides[0], New: sides[1], index: make(map[model.FuncID]int)}
	for num, id := range fm.IDs {
		var b, n counts
		if num < len(funcs[0]) {
			b = funcs[0][num]
		}
		n = funcs[1][num]
		if !b.present && !n.present {
			continue // in a function table but never run
		}
		r.Functions = append(r.Functions, Function{Name: id.Name, Module: id.Module, Display: display[num], Short: short[num],
			Status: status(b.present, n.present), Calls: delta(b.calls, n.calls), Self: delta(b.self, n.self),
			Total: delta(b.total, n.total)})
	}
	for _, k := range edgeOrder {
		c := edges[k]
		r.Edges = append(r.Edges, Edge{Caller: fm.IDs[k.from], Callee: fm.IDs[k.to],
			CallerDisplay: display[k.from], CalleeDisplay: display[k.to], CallerShort: short[k.from],
			CalleeShort: short[k.to], Kind: k.kind,
			Status: status(c[0].present, c[1].present), Calls: delta(c[0].calls, c[1].calls),
			Total: delta(c[0].total, c[1].total)})
	}
	sortFunctions(r.Functions, byName)
	sortEdges(r.Edges, edgeByName)
	for i := range r.Functions {
		r.index[r.Functions[i].ID()] = i
	}
	return r, nil
}

func side(p *model.Profile, g *model.Graph) Side {
	m := &p.Meta
	return Side{Exe: m.Exe, Command: m.Command, Mode: m.Mode, DurationNs: m.DurationNs, TracedNs: g.TracedNs,
		Partial: m.Partial, Values: m.Values(), Sampled: m.Sampled(), Times: TimesWall}
}

func status(inBase, inNew bool) Status {
	switch {
	case !inBase:
		return Added
	case !inNew:
		return Removed
	}
	return Both
}

// FuncDelta returns the change of function name of module (its base name;
// "" for START), for drawings that colour a profile's functions by change.
func (r *Result) FuncDelta(module, name string) (Function, bool) {
	i, ok := r.index[model.FuncID{Module: module, Name: name}]
	if !ok {
		return Function{}, false
	}
	return r.Functions[i], true
}

// Of returns the change of function f of p, which is one of the two
// compared profiles (or a profile with the same functions).
func (r *Result) Of(p *model.Profile, f int) (Function, bool) {
	if f == model.StartFunc {
		return r.FuncDelta("", model.StartName)
	}
	fn := p.Functions[f]
	return r.FuncDelta(p.ModuleName(fn.Module), fn.Name)
}

// byName orders functions by display name, then module.
func byName(a, b *Function) int {
	return cmp.Or(cmp.Compare(a.Display, b.Display), cmp.Compare(a.Module, b.Module))
}
