package diff

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/profile-dev/profile/internal/human"
	"github.com/profile-dev/profile/internal/tables"
)

// WriteText writes r as text tables for a terminal.
func WriteText(w io.Writer, r *Report) error { return tables.WriteText(w, layout(r)) }

// WriteMarkdown writes r as GitHub-flavoured markdown, for a CI job's
// summary or a pull-request comment.
func WriteMarkdown(w io.Writer, r *Report) error {
	return tables.WriteMarkdown(w, "Profile diff", layout(r))
}

const text, symbol, number = tables.Text, tables.Symbol, tables.Number

var sortNames = map[SortKey]string{SortSelf: "self change", SortTotal: "total change",
	SortCalls: "change of calls", SortName: "name"}

// layout lays r out for the human formats: times with three significant
// digits, changes signed, relative changes in percent with two decimals
// ("new" for a function or edge only in the new profile).
func layout(r *Report) []tables.Table {
	d := human.Duration
	n := func(v int64) string { return strconv.FormatInt(v, 10) }
	// shown is a function's name in the tables: shortened unless FullNames
	shown := func(full, short string) string {
		if r.FullNames {
			return full
		}
		return short
	}
	prof := tables.Table{Title: "Profiles",
		Header: []string{"side", "file", "exe", "mode", "duration", "traced", "values", "times"},
		Kinds:  []tables.Kind{text, text, text, text, number, number, text, text}}
	for _, s := range []struct {
		name, file string
		side       *Side
	}{{"base", r.BaseName, &r.Base}, {"new", r.NewName, &r.New}} {
		mode := orDash(s.side.Mode)
		if s.side.Partial {
			mode += " (partial)"
		}
		prof.Rows = append(prof.Rows, []string{s.name, orDash(s.file), orDash(s.side.Exe), mode,
			d(s.side.DurationNs), d(s.side.TracedNs), s.side.Values, s.side.Times})
	}
	by := sortNames[r.Sort]
	if r.Sort != SortName {
		by = "largest " + by + " first"
	}
	fs := tables.Table{Title: fmt.Sprintf("Functions (by %s, %d of %d)", by, len(r.Functions), r.AllFunctions),
		Header: []string{"function", "calls base", "calls new", "Δ calls", "self base", "self new", "Δ self", "Δ self %",
			"total base", "total new", "Δ total", "Δ total %"},
		Kinds: []tables.Kind{symbol, number, number, number, number, number, number, number, number, number, number, number}}
	for _, f := range r.Functions {
		fs.Rows = append(fs.Rows, []string{shown(f.Display, f.Short), n(f.Calls.Base), n(f.Calls.New), SignedCount(f.Calls.Delta),
			d(f.Self.Base), d(f.Self.New), SignedDuration(f.Self.Delta), RelPct(f.Self),
			d(f.Total.Base), d(f.Total.New), SignedDuration(f.Total.Delta), RelPct(f.Total)})
	}
	ebys := map[SortKey]string{SortSelf: "largest total change first", SortTotal: "largest total change first",
		SortCalls: "largest change of calls first", SortName: "name"}
	es := tables.Table{Title: fmt.Sprintf("Edges (by %s, %d of %d)", ebys[r.Sort], len(r.Edges), r.AllEdges),
		Header: []string{"caller", "callee", "kind", "calls base", "calls new", "Δ calls", "Δ calls %",
			"total base", "total new", "Δ total", "Δ total %"},
		Kinds: []tables.Kind{symbol, symbol, text, number, number, number, number, number, number, number, number}}
	for _, e := range r.Edges {
		es.Rows = append(es.Rows, []string{shown(e.CallerDisplay, e.CallerShort), shown(e.CalleeDisplay, e.CalleeShort), e.Kind.String(),
			n(e.Calls.Base), n(e.Calls.New), SignedCount(e.Calls.Delta), RelPct(e.Calls),
			d(e.Total.Base), d(e.Total.New), SignedDuration(e.Total.Delta), RelPct(e.Total)})
	}
	out := []tables.Table{prof, fs, es}
	if len(r.Gates) > 0 {
		gs := tables.Table{Title: "Gates (--fail-on)", Header: []string{"gate", "verdict", "broken by"},
			Kinds: []tables.Kind{symbol, text, text}}
		for _, g := range r.Gates {
			verdict, names := "passed", make([]string, len(g.Functions))
			if len(g.Functions) > 0 {
				verdict = fmt.Sprintf("broken by %d", len(g.Functions))
			}
			for i, f := range g.Functions {
				names[i] = shown(f.Display, f.Short)
			}
			gs.Rows = append(gs.Rows, []string{g.Gate.Expr, verdict, orDash(strings.Join(names, ", "))})
		}
		out = append(out, gs)
	}
	return out
}

// Describe says in one line which gates b's function breaks and by how
// much: "hot breaks self>+50% (self 16.6ms → 238ms, +221ms, +1330.00%)".
func (b *Breach) Describe() string {
	f := &b.Function
	parts := make([]string, len(b.Gates))
	for i, g := range b.Gates {
		var seen [len(metricNames)]bool
		var nums []string
		for _, c := range g.Conds {
			if seen[c.Metric] {
				continue
			}
			seen[c.Metric] = true
			nums = append(nums, describeChange(c.Metric, c.Metric.Of(f)))
		}
		parts[i] = fmt.Sprintf("%s (%s)", g.Expr, strings.Join(nums, "; "))
	}
	return f.Display + " breaks " + strings.Join(parts, ", ")
}

func describeChange(m Metric, d Delta) string {
	if m == MetricCalls {
		return fmt.Sprintf("calls %d → %d, %s, %s", d.Base, d.New, SignedCount(d.Delta), RelPct(d))
	}
	return fmt.Sprintf("%s %s → %s, %s, %s", m, human.Duration(d.Base), human.Duration(d.New),
		SignedDuration(d.Delta), RelPct(d))
}

// SignedDuration formats a change of time: "+1.23ms", "-40ns", "0ns".
func SignedDuration(ns int64) string {
	if ns > 0 {
		return "+" + human.Duration(ns)
	}
	return human.Duration(ns)
}

// SignedCount formats a change of a count: "+1000", "-3", "0".
func SignedCount(v int64) string {
	if v > 0 {
		return "+" + strconv.FormatInt(v, 10)
	}
	return strconv.FormatInt(v, 10)
}

// RelPct formats a relative change: "+12.50%", "-100.00%", "0.00%", or
// "new" where the base is 0.
func RelPct(d Delta) string {
	if math.IsInf(d.RelPct, 0) {
		return "new"
	}
	if d.RelPct > 0 {
		return "+" + human.Percent(d.RelPct)
	}
	return human.Percent(d.RelPct)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
