package diff

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/profile-dev/profile/internal/human"
	"github.com/profile-dev/profile/model"
)

// A gate is a condition on a function's change that a CI job fails on
// (profile diff --fail-on). Its grammar:
//
//	gate   = [ "func~" REGEX ":" ] cond { "&" cond }
//	cond   = metric ( ">" [ "+" ] | "<-" ) amount
//	metric = "calls" | "self" | "total" | "self/call" | "total/call"
//	amount = NUMBER "%"             relative to the base value
//	       | NUMBER                 calls only: a number of calls
//	       | NUMBER UNIT            times: ns, us (µs), ms or s
//
// ">+X" holds when the metric grew by more than X, "<-X" when it shrank
// by more than X: self>+10% (self time up by more than 10% of the base's),
// calls>+1000, total>+5ms, self<-50%. A function that is new has grown by
// an infinite percentage; one that is gone has shrunk by 100%. A gate
// breaks when all its conditions hold for one function, so a relative
// change can be asked to be large in absolute terms too (self>+10%&self>+1ms:
// small functions' times vary by more than 10% from run to run). A scope
// limits the gate to the functions whose display name ("name", or
// "module:name" for a library function) matches REGEX, unanchored; REGEX
// ends at the last ':' of the gate. START (time outside traced functions)
// breaks no gate.
//
// self/call and total/call are the times per call (perCallDelta), so a run
// that does twice the work at the same speed breaks none of their gates.
// A condition on a time holds only for a change at or above the report's
// noise floor (noise.go): under it a change is noise whatever its
// percentage. Call counts are exact and have no floor.

// Metric is a number a gate checks.
type Metric uint8

// Metrics.
const (
	MetricCalls Metric = iota
	MetricSelf
	MetricTotal
	MetricSelfPerCall
	MetricTotalPerCall
)

var metricNames = [...]string{"calls", "self", "total", "self/call", "total/call"}

func (m Metric) String() string { return metricNames[m] }

// Of returns the metric's change for f.
func (m Metric) Of(f *Function) Delta {
	switch m {
	case MetricCalls:
		return f.Calls
	case MetricSelf:
		return f.Self
	case MetricTotal:
		return f.Total
	case MetricSelfPerCall:
		return perCallDelta(f.Self, f.Calls)
	}
	return perCallDelta(f.Total, f.Calls)
}

// time reports whether the metric is a time (the noise floor applies).
func (m Metric) time() bool { return m != MetricCalls }

// size is the time a change of m amounts to, what the noise floor is
// compared with: the change itself for self and total; for a time per
// call, the change per call over the calls of the side with more, the
// time the change costs (or saves) in a run.
func (m Metric) size(f *Function) float64 { return timeSize(m.timeOf(f), f.Calls, m.perCall()) }

// baseSize is the base value as a time in the same terms as size.
func (m Metric) baseSize(f *Function) float64 { return timeBase(m.timeOf(f), f.Calls, m.perCall()) }

// timeOf is the time m is of: f's self or total time.
func (m Metric) timeOf(f *Function) Delta {
	if m == MetricSelf || m == MetricSelfPerCall {
		return f.Self
	}
	return f.Total
}

func (m Metric) perCall() bool { return m == MetricSelfPerCall || m == MetricTotalPerCall }

// Cond is one condition of a gate.
type Cond struct {
	Metric   Metric
	Decrease bool    // shrank by more than Amount ("<-"), else grew (">+")
	Percent  bool    // Amount is a percentage of the base value
	Amount   float64 // percent, calls or nanoseconds; never negative
}

// Gate is a parsed --fail-on expression.
type Gate struct {
	Expr  string         // as given
	Scope *regexp.Regexp // nil: every function
	Conds []Cond
}

func (g *Gate) String() string { return g.Expr }

// calls reports whether the gate checks call counts, or times per call.
func (g *Gate) calls() bool {
	for _, c := range g.Conds {
		if c.Metric == MetricCalls || c.Metric.perCall() {
			return true
		}
	}
	return false
}

// ParseGate reads a gate expression (see the grammar above).
func ParseGate(expr string) (*Gate, error) {
	g := &Gate{Expr: strings.TrimSpace(expr)}
	conds := g.Expr
	if i := strings.LastIndexByte(conds, ':'); i >= 0 {
		scope := strings.TrimSpace(conds[:i])
		conds = conds[i+1:]
		re, ok := strings.CutPrefix(scope, "func~")
		if !ok {
			return nil, fmt.Errorf("gate %q: scope %q must be func~REGEX", expr, scope)
		}
		if re == "" {
			return nil, fmt.Errorf("gate %q: empty regular expression after func~", expr)
		}
		var err error
		if g.Scope, err = regexp.Compile(re); err != nil {
			return nil, fmt.Errorf("gate %q: %w", expr, err)
		}
	}
	for _, s := range strings.Split(conds, "&") {
		c, err := parseCond(strings.TrimSpace(s))
		if err != nil {
			return nil, fmt.Errorf("gate %q: %w", expr, err)
		}
		g.Conds = append(g.Conds, c)
	}
	return g, nil
}

func parseCond(s string) (Cond, error) {
	var c Cond
	i := strings.IndexAny(s, "<>")
	if i < 0 {
		if s == "" {
			return c, fmt.Errorf("empty condition: write METRIC>+AMOUNT or METRIC<-AMOUNT")
		}
		return c, fmt.Errorf("%q has no > or <: write METRIC>+AMOUNT or METRIC<-AMOUNT", s)
	}
	name := strings.TrimSpace(s[:i])
	found := false
	for m, n := range metricNames {
		if n == name {
			c.Metric, found = Metric(m), true
		}
	}
	if !found {
		return c, fmt.Errorf("unknown metric %q: use calls, self, total, self/call or total/call", name)
	}
	op, rest := s[i], strings.TrimSpace(s[i+1:])
	sign := byte(0)
	if rest != "" && (rest[0] == '+' || rest[0] == '-') {
		sign, rest = rest[0], strings.TrimSpace(rest[1:])
	}
	switch {
	case op == '>' && sign == '-':
		return c, fmt.Errorf("%q would hold for every function that did not shrink by %s: write %s<-%s for a decrease of more than %s",
			s, rest, name, rest, rest)
	case op == '<' && sign != '-':
		return c, fmt.Errorf("%q would hold for almost every function: write %s<-%s for a decrease of more than %s, %s>+%s for an increase",
			s, name, rest, rest, name, rest)
	}
	c.Decrease = op == '<'
	amount, err := parseAmount(c.Metric, rest)
	if err != nil {
		return c, err
	}
	c.Percent, c.Amount = strings.HasSuffix(rest, "%"), amount
	return c, nil
}

// parseAmount reads a percentage, a number of calls or a duration.
func parseAmount(m Metric, s string) (float64, error) {
	var v float64
	var err error
	switch {
	case strings.HasSuffix(s, "%"):
		v, err = strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(s, "%")), 64)
		if err != nil {
			return 0, fmt.Errorf("%q is not a percentage", s)
		}
	case m == MetricCalls:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%q is not a number of calls (or a percentage)", s)
		}
		v = float64(n)
	default:
		if s == "" || !unicode.IsLetter(rune(s[len(s)-1])) {
			return 0, fmt.Errorf("%q: a time needs a unit (ns, us, µs, ms, s) or %%", s)
		}
		if v, err = human.ParseDuration(s); err != nil {
			return 0, fmt.Errorf("%q is not a duration (like 5ms) or a percentage", s)
		}
	}
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return 0, fmt.Errorf("%q: the amount must be a finite number, the sign before it", s)
	}
	return v, nil
}

// Breaks reports whether f breaks the gate with the noise floor floorNs
// (0 for none): f is in its scope and every condition holds.
func (g *Gate) Breaks(f *Function, floorNs int64) bool {
	if f.Module == "" && f.Name == model.StartName {
		return false
	}
	if g.Scope != nil && !g.Scope.MatchString(f.Display) {
		return false
	}
	for _, c := range g.Conds {
		if !c.holds(f, floorNs) {
			return false
		}
	}
	return true
}

// holds reports whether the condition holds for f: a change of time
// under the floor never does, and one from a base under it is new.
func (c Cond) holds(f *Function, floorNs int64) bool {
	d := c.Metric.Of(f)
	if c.Metric.time() && floorNs > 0 {
		if c.Metric.size(f) < float64(floorNs) {
			return false
		}
		if c.Metric.baseSize(f) < float64(floorNs) {
			d.RelPct = math.Inf(1)
		}
	}
	return c.Holds(d)
}

// Holds reports whether the condition holds for a change, with no noise
// floor.
func (c Cond) Holds(d Delta) bool {
	change := float64(d.Delta)
	if c.Percent {
		change = d.RelPct
	}
	if c.Decrease {
		change = -change
	}
	return change > c.Amount
}

// severity is how badly f breaks the gate, to name the worst first: the
// size of the change of the gate's first time metric, else of calls.
func (g *Gate) severity(f *Function) float64 {
	for _, c := range g.Conds {
		if c.Metric.time() {
			return c.Metric.size(f)
		}
	}
	return math.Abs(float64(f.Calls.Delta))
}
