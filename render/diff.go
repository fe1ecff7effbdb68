package render

import (
	"fmt"

	"github.com/profile-dev/profile/diff"
	"github.com/profile-dev/profile/internal/human"
)

// With Options.Diff the call graph of the new profile is coloured by
// change instead of shaded by coverage (render --diff BASE): each node is
// filled with diff.Color of its function (red slower, blue faster, the
// deeper the larger the change of self time as a share of the drawn
// scope's time, grey under diff.Unchanged of it), and
// its label gains a line with the change: "Δ +221ms (+1330.00%)", plus the
// change of calls when there is one. The change is the function's (diff
// matches functions, not nodes): a thread root drawn once per nesting
// level shows it on each of its nodes. START keeps its plain ellipse.

// diffNode returns the fill attributes and the extra label line of
// function fn's node.
func (d *drawer) diffNode(fn int) (attrs []string, line string) {
	f, ok := d.opt.Diff.Of(d.p, fn)
	if !ok {
		return []string{`fillcolor="` + diff.Grey + `"`}, `Δ ?`
	}
	fill, white := diff.Color(f, d.v.base)
	attrs = []string{`fillcolor="` + fill + `"`}
	if white {
		attrs = append(attrs, "fontcolor=white")
	}
	switch f.Status {
	case diff.Added:
		line = "Δ new: " + human.Duration(f.Self.New)
	default:
		line = fmt.Sprintf("Δ %s (%s)", diff.SignedDuration(f.Self.Delta), diff.RelPct(f.Self))
	}
	if f.Calls.Delta != 0 {
		line += fmt.Sprintf(", %s calls", diff.SignedCount(f.Calls.Delta))
	}
	return attrs, line
}

// diffLegend is the legend's lines on the colours of a diff.
func diffLegend() []string {
	return []string{"Δ: change of self time from the base",
		fmt.Sprintf("    red: slower, blue: faster, by share of the time (deepest at %s), grey: under %s",
			pct(diff.FullShare), pct(diff.Unchanged))}
}
