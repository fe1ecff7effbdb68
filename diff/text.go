package diff

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/profile-dev/profile/internal/human"
	"github.com/profile-dev/profile/internal/tables"
)

// Width is the number of columns the text report fits in: numbers keep
// their width, function names and paths are cut to what is left.
const Width = 120

// WriteText writes r as text tables for a terminal, Width columns wide;
// with FullNames as wide as the names need, as asked.
func WriteText(w io.Writer, r *Report) error {
	width := Width
	if r.FullNames {
		width = 0
	}
	return tables.WriteText(w, layout(r, width))
}

// WriteMarkdown writes r as GitHub-flavoured markdown, for a CI job's
// summary or a pull-request comment; a page wraps it, so names stay whole.
func WriteMarkdown(w io.Writer, r *Report) error {
	return tables.WriteMarkdown(w, "Profile diff", layout(r, 0))
}

const text, symbol, number = tables.Text, tables.Symbol, tables.Number

var sortNames = map[SortKey]string{SortSelf: "self change", SortTotal: "total change",
	SortCalls: "change of calls", SortName: "name"}

// MaxNamed is how many functions breaking a gate are named, the worst
// first, before a count of the rest: a regression shows in its worst few.
const MaxNamed = 10

// layout lays r out for the human formats, width columns wide (0: no
// limit): times with three significant digits, changes signed, relative
// changes in percent with two decimals (relText). The rows show the new
// values and the changes; the base is new minus the change (the JSON has
// both).
func layout(r *Report, width int) []tables.Table {
	d := human.Duration
	prof := tables.Table{Title: "Profiles", Header: []string{"", "base", "new"}, Kinds: []tables.Kind{text, text, text}}
	side := func(label string, f func(s *Side) string) {
		prof.Rows = append(prof.Rows, []string{label, f(&r.Base), f(&r.New)})
	}
	prof.Rows = append(prof.Rows, []string{"file", orDash(r.BaseName), orDash(r.NewName)})
	side("exe", func(s *Side) string { return orDash(s.Exe) })
	side("mode", func(s *Side) string {
		if s.Partial {
			return orDash(s.Mode) + " (partial)"
		}
		return orDash(s.Mode)
	})
	side("duration", func(s *Side) string { return d(s.DurationNs) })
	side("traced", func(s *Side) string { return d(s.TracedNs) })
	side("values", func(s *Side) string { return s.Values })
	side("times", func(s *Side) string { return s.Times })
	noise := "none: every change is listed and gated (--noise 0)"
	if r.NoiseNs > 0 {
		noise = fmt.Sprintf("%s: changes under it are not listed and break no gate", d(r.NoiseNs))
		if r.Noise.Ns == 0 {
			noise = fmt.Sprintf("%s (%s of the traced time): changes under it are not listed and break no gate",
				d(r.NoiseNs), human.Percent(r.Noise.Pct))
		}
	}
	prof.Note = []tables.Span{{Text: "noise floor " + noise}}
	fit(&prof, width, tailCut, 1, 2)

	by := sortNames[r.Sort]
	if r.Sort != SortName {
		by = "largest " + by + " first"
	}
	selfM, totalM := r.timeMetrics()
	// per call, the Δ columns say only Δ: "Δ self/call" would take a
	// name's room
	view, per, dself, dtotal := "", "", "Δ self", "Δ total"
	if r.PerCall {
		view, per, dself, dtotal = ", per call", "/call", "Δ", "Δ"
	}
	quiet := func(n int) string {
		if n == 0 {
			return ""
		}
		return fmt.Sprintf("; %d under the noise floor", n)
	}
	fs := tables.Table{Title: fmt.Sprintf("Functions (by %s%s, %d of %d%s)", by, view, len(r.Functions), r.AllFunctions,
		quiet(r.QuietFunctions)),
		Header: []string{"function", "calls", "Δ calls", "self" + per, dself, "Δ %", "total" + per, dtotal, "Δ %"},
		Kinds:  []tables.Kind{symbol, number, number, number, number, number, number, number, number}}
	for _, f := range r.Functions {
		self, total := selfM.Of(&f), totalM.Of(&f)
		fs.Rows = append(fs.Rows, []string{r.shown(f.Display, f.Short), strconv.FormatInt(f.Calls.New, 10),
			SignedCount(f.Calls.Delta),
			d(self.New), SignedDuration(self.Delta), relText(f.Self, f.Calls, r.PerCall, r.NoiseNs),
			d(total.New), SignedDuration(total.Delta), relText(f.Total, f.Calls, r.PerCall, r.NoiseNs)})
	}
	fs.Note = []tables.Span{{Text: "calls, self" + per + " and total" + per + " are the new profile's; Δ = new - base"}}
	fit(&fs, width, midCut, 0)

	ebys := map[SortKey]string{SortSelf: "largest total change first", SortTotal: "largest total change first",
		SortCalls: "largest change of calls first", SortName: "name"}
	es := tables.Table{Title: fmt.Sprintf("Edges (by %s%s, %d of %d%s)", ebys[r.Sort], view, len(r.Edges), r.AllEdges,
		quiet(r.QuietEdges)),
		Header: []string{"caller", "callee", "kind", "calls", "Δ calls", "total" + per, dtotal, "Δ %"},
		Kinds:  []tables.Kind{symbol, symbol, text, number, number, number, number, number}}
	for _, e := range r.Edges {
		total := e.Total
		if r.PerCall {
			total = perCallDelta(e.Total, e.Calls)
		}
		es.Rows = append(es.Rows, []string{r.shown(e.CallerDisplay, e.CallerShort), r.shown(e.CalleeDisplay, e.CalleeShort),
			e.Kind.String(), strconv.FormatInt(e.Calls.New, 10), SignedCount(e.Calls.Delta),
			d(total.New), SignedDuration(total.Delta), relText(e.Total, e.Calls, r.PerCall, r.NoiseNs)})
	}
	fit(&es, width, midCut, 0, 1)
	out := []tables.Table{prof, fs, es}
	if len(r.Gates) > 0 {
		gs := tables.Table{Title: "Gates (--fail-on)", Header: []string{"gate", "verdict", "function", "change"},
			Kinds: []tables.Kind{text, text, symbol, text}}
		for _, g := range r.Gates {
			if len(g.Functions) == 0 {
				gs.Rows = append(gs.Rows, []string{g.Gate.Expr, "passed", "-", "-"})
				continue
			}
			for i, f := range g.Functions[:min(MaxNamed, len(g.Functions))] {
				expr, verdict := "", ""
				if i == 0 {
					expr, verdict = g.Gate.Expr, fmt.Sprintf("broken by %d", len(g.Functions))
				}
				m := g.Gate.Conds[0].Metric
				gs.Rows = append(gs.Rows, []string{expr, verdict, r.shown(f.Display, f.Short), r.describeChange(m, &f)})
			}
			if n := len(g.Functions) - MaxNamed; n > 0 {
				gs.Rows = append(gs.Rows, []string{"", "", fmt.Sprintf("… and %d more", n), ""})
			}
		}
		fit(&gs, width, midCut, 2, 0)
		out = append(out, gs)
	}
	return out
}

// shown is a function's name in the tables: shortened unless FullNames.
func (r *Report) shown(full, short string) string {
	if r.FullNames {
		return full
	}
	return short
}

// fit cuts the cells of columns cols of t (names, paths) so that its text
// form is at most width columns wide (0: no limit): the other columns keep
// their width, and cols share what is left, a narrow one keeping its
// width and a wide one taking the rest. A cut is at least minCut wide,
// so a table of very wide numbers may still overflow.
func fit(t *tables.Table, width int, cut func(string, int) string, cols ...int) {
	if width <= 0 {
		return
	}
	widths := make([]int, len(t.Header))
	for c, h := range t.Header {
		widths[c] = utf8.RuneCountInString(h)
		for _, row := range t.Rows {
			widths[c] = max(widths[c], utf8.RuneCountInString(row[c]))
		}
	}
	// tablewriter: a border, then each column padded by a space either side and closed by a border
	left := width - 1
	for c, w := range widths {
		left -= 3
		if !slices.Contains(cols, c) {
			left -= w
		}
	}
	byWidth := slices.Clone(cols)
	slices.SortFunc(byWidth, func(a, b int) int { return widths[a] - widths[b] })
	for i, c := range byWidth {
		share := max(minCut, left/(len(byWidth)-i))
		if widths[c] > share {
			for _, row := range t.Rows {
				row[c] = cut(row[c], share)
			}
			widths[c] = share
		}
		left -= widths[c]
	}
}

// minCut is the narrowest a name or path is cut to.
const minCut = 16

// midCut cuts s to w runes in the middle, where a C++ name's namespaces
// and template arguments are: its start and its end (the function) stay.
func midCut(s string, w int) string {
	r := []rune(s)
	if len(r) <= w {
		return s
	}
	head := (w - 1) / 3
	return string(r[:head]) + "…" + string(r[len(r)-(w-1-head):])
}

// tailCut cuts s to its last w runes: a path's end names the file.
func tailCut(s string, w int) string {
	r := []rune(s)
	if len(r) <= w {
		return s
	}
	return "…" + string(r[len(r)-(w-1):])
}

// relText formats the relative change of time t (per call with perCall)
// under the noise floor floorNs: "new" from a base under the floor, as
// for a function that was not there ("~" when the new value is under it
// too: a percentage of two noises means nothing), else RelPct.
func relText(t, calls Delta, perCall bool, floorNs int64) string {
	d := t
	if perCall {
		d = perCallDelta(t, calls)
	}
	if floorNs > 0 && d.Base != 0 && timeBase(t, calls, perCall) < float64(floorNs) {
		if timeNew(t, calls, perCall) < float64(floorNs) {
			return "~"
		}
		return "new"
	}
	return RelPct(d)
}

// Messages are the lines saying which gates r's functions break, the worst
// MaxNamed first and then how many more do: one line each, names shown as
// in the tables (cut to half the width).
func (r *Report) Messages() []string {
	var lines []string
	for _, b := range r.Breaches[:min(MaxNamed, len(r.Breaches))] {
		lines = append(lines, r.describe(&b))
	}
	if n := len(r.Breaches) - MaxNamed; n > 0 {
		lines = append(lines, fmt.Sprintf("… and %d more functions break a gate (--format json lists them all)", n))
	}
	return lines
}

// describe says in one line which gates b's function breaks and by how
// much: "hot breaks self>+50% (self 16.6ms → 238ms, +221ms, +1330.00%)".
func (r *Report) describe(b *Breach) string {
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
			nums = append(nums, r.describeChange(c.Metric, f))
		}
		parts[i] = fmt.Sprintf("%s (%s)", g.Expr, strings.Join(nums, "; "))
	}
	name := r.shown(f.Display, f.Short)
	if !r.FullNames {
		name = midCut(name, Width/2)
	}
	return name + " breaks " + strings.Join(parts, ", ")
}

func (r *Report) describeChange(m Metric, f *Function) string {
	d := m.Of(f)
	if m == MetricCalls {
		return fmt.Sprintf("calls %d → %d, %s, %s", d.Base, d.New, SignedCount(d.Delta), RelPct(d))
	}
	return fmt.Sprintf("%s %s → %s, %s, %s", m, human.Duration(d.Base), human.Duration(d.New),
		SignedDuration(d.Delta), relText(m.timeOf(f), f.Calls, m.perCall(), r.NoiseNs))
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
