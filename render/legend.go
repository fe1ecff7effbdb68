package render

import (
	"fmt"
	"strings"

	"github.com/profile-dev/profile/internal/human"
	"github.com/profile-dev/profile/model"
)

// maxLegendThreads caps the threads the legend lists (summary --threads
// lists them all).
const maxLegendThreads = 32

// legend draws the legend: a note of explanations and, unless comparing,
// the heat scale's swatches, one small box per step. Like every box they
// are sized from textWidth, so that their text fits.
func (d *drawer) legend() {
	l := d.legendText(d.inScope)
	const size = legendFont
	for i := range l {
		l[i] = text(l[i])
	}
	d.b.WriteString("  subgraph cluster_legend {\n    style=invis;\n")
	fmt.Fprintf(&d.b, "    legend [shape=note, fillcolor=\"#f8f8f8\", fontsize=%d, width=%.2f, label=\"%s\\l\"];\n",
		size, boxWidth(l, size), strings.Join(l, `\l`))
	if d.opt.Diff == nil {
		// the heat scale: one swatch per step, on one rank below the note
		sw := heatSwatches(d.opt.Warm, d.opt.Hot, d.v.cpu == nil)
		var names []string
		for i, s := range sw {
			attrs := fmt.Sprintf(`label=%s, fillcolor="%s", fontsize=%d, width=%.2f, height=0.25`,
				quote(text(s.text)), s.fill, size, boxWidth([]string{s.text}, size))
			if s.dark {
				attrs += ", fontcolor=white"
			}
			names = append(names, fmt.Sprintf("heat%d", i))
			fmt.Fprintf(&d.b, "    heat%d [%s];\n", i, attrs)
		}
		fmt.Fprintf(&d.b, "    { rank=same; %s }\n", strings.Join(names, "; "))
		fmt.Fprintf(&d.b, "    legend -> %s [style=invis];\n", strings.Join(names, " -> "))
	}
	d.b.WriteString("  }\n")
}

// legendText is the legend's lines, the first "Legend".
func (d *drawer) legendText(inScope []model.NumberedThread) []string {
	basis := "busy time (waiting left out)"
	switch {
	case d.opt.Wall:
		basis = "wall time"
	case d.v.cpu != nil:
		basis = "busy time (CPU samples)"
	}
	l := []string{"node: function (a library's: module:name)"}
	if d.v.shortened() {
		l = append(l, "    C++/Rust names shortened: (…) and <…> elided,",
			"    full name in the tooltip (--full-names)")
	}
	l = append(l,
		"    self: time in its own code; total: inclusive time",
		fmt.Sprintf("    %s, shares of %s", basis, human.Duration(d.v.base)))
	if d.opt.ThreadShare {
		l = append(l, "    (x% of #N): of thread N's time, the thread where largest")
	}
	l = append(l,
		"edge: N× calls along it, their total time (share)",
		"    N× recursive: every call recursive, its time in the outer call",
		"    rc=N: N of the calls recursive; width: total time",
		"    dashed: spawn, dotted: fork, bold and …: elided by prune",
		"START (ellipse): the root of every thread",
		"    self: the threads' time outside traced code",
		"[Ln]: the first traced function of threads at nesting level n",
		"    (0: a process's first thread, 1: threads it spawned, ...)")
	if !d.opt.Threads {
		l = append(l, "    a library function's levels are one node (--threads splits)")
	}
	if d.opt.Diff != nil {
		l = append(l, diffLegend()...)
	} else {
		l = append(l,
			fmt.Sprintf("fill: self share, pale to red: warm ≥ %s, hot ≥ %s", pct(d.opt.Warm), pct(d.opt.Hot)),
			"    font size: self share")
		if d.v.cpu == nil {
			l = append(l, "blue-grey: waiting calls (sleep, I/O, locks, conditions):",
				"    blocked time, never hot")
		} else {
			l = append(l, "waiting calls (sleep, I/O, locks, conditions):",
				"    their CPU time sampled, busy like any other")
		}
	}
	if d.opt.Threads {
		times := "wall time"
		if d.v.cpu != nil {
			times = "sampled CPU time"
		}
		l = append(l, "threads: T: (calls, total, %) per thread, "+times,
			"    A→B: thread A created thread B")
		for i, t := range inScope {
			if i == maxLegendThreads {
				l = append(l, fmt.Sprintf("… and %d more threads (summary --threads lists them)", len(inScope)-i))
				break
			}
			s := fmt.Sprintf("%d = tid %d (%s), pid %d, level %d", t.Number, t.Tid, orDash(t.Name), t.Pid, t.Level)
			if t.Member != model.None {
				s += fmt.Sprintf(", run %d", t.Run)
			}
			l = append(l, s)
		}
	}
	return append([]string{"Legend"}, l...)
}

// swatch is one colour of the legend's scale.
type swatch struct {
	fill, text string
	dark       bool
}

// heatSwatches are the heat scale's steps with the self share each
// starts at, and the waiting colour when waiting calls have it.
func heatSwatches(warm, hot float64, waiting bool) []swatch {
	var out []swatch
	for step, fill := range heatScale {
		var from float64
		switch {
		case step < 4:
			from = warm * float64(step) / 4
		case step < hotStep:
			from = warm + (hot-warm)*float64(step-4)/2
		default:
			from = hot + (1-hot)*float64(step-hotStep)/3
		}
		out = append(out, swatch{fill: fill, text: "≥" + human.Percent(100*from), dark: darkFill(step)})
	}
	if !waiting {
		return out
	}
	return append(out, swatch{fill: waitFill, text: "waiting"})
}

// shortened reports whether some node's label shows a shortened name.
func (v *view) shortened() bool {
	if v.full {
		return false
	}
	for i := range v.nodes {
		if f := v.nodes[i].key.Func; v.p.ShortFuncName(f) != v.p.FuncName(f) {
			return true
		}
	}
	return false
}
