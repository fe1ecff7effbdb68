package timeline

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/profile-dev/profile/model"
)

// row is one line of a thread's timeline.
type row struct {
	start, dur string
	kept       bool
	call       string
}

// WriteText writes the detail trees of p as text: a legend, then per
// thread a header and one line per call: start (from the profile's
// start), duration, "*" for a kept call, and the call indented by depth.
// Consecutive trees that share ancestors (the same activations) show them
// once, as a timeline would.
func WriteText(w io.Writer, p *model.Profile, opt Options) error {
	threads, err := selectTrees(p, opt)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	if msg := emptyMessage(p, threads, opt); msg != "" {
		fmt.Fprintln(bw, msg)
		return bw.Flush()
	}
	rows := make([][]row, len(threads))
	startW, durW := len("START"), len("DURATION")
	for i, tt := range threads {
		rows[i] = threadRows(p, tt.trees, opt.FullNames)
		for _, r := range rows[i] {
			startW = max(startW, utf8.RuneCountInString(r.start))
			durW = max(durW, utf8.RuneCountInString(r.dur))
		}
	}
	fmt.Fprintf(bw, "kept (*): %s; the others are their callers\n", ruleText(p.Meta.Detail))
	for i, tt := range threads {
		if len(tt.trees) == 0 {
			continue
		}
		fmt.Fprintf(bw, "\n%s\n", threadHeader(tt, opt))
		fmt.Fprintf(bw, "%*s  %*s   | CALL\n", startW, "START", durW, "DURATION")
		for _, r := range rows[i] {
			mark := ' '
			if r.kept {
				mark = '*'
			}
			fmt.Fprintf(bw, "%*s  %*s %c | %s\n", startW, r.start, durW, r.dur, mark, r.call)
		}
	}
	return bw.Flush()
}

// emptyMessage is what is printed instead of trees when none is shown,
// saying why; "" when some are.
func emptyMessage(p *model.Profile, threads []threadTrees, opt Options) string {
	total := 0
	for _, tt := range threads {
		if len(tt.trees) > 0 {
			return ""
		}
		total += len(tt.t.Trees)
	}
	where := ""
	if opt.Tid != 0 {
		where = fmt.Sprintf(" in thread %d", opt.Tid)
	}
	if total > 0 {
		return fmt.Sprintf("no detail trees%s whose kept call lasted at least %s (%d shorter)", where, time.Duration(opt.MinNs), total)
	}
	return fmt.Sprintf("no detail trees%s: no call met the rule (%s)", where, ruleText(p.Meta.Detail))
}

// ruleText says which calls were kept, from the recording's rule.
func ruleText(r *model.DetailRule) string {
	if r == nil {
		return "calls that met the --detail rule"
	}
	s := "calls of " + r.Funcs
	if r.SlowNs > 0 {
		s += " that lasted at least " + time.Duration(r.SlowNs).String()
	}
	if r.If != "" {
		if r.SlowNs > 0 {
			s += " and"
		}
		s += " where " + r.If
	}
	return s
}

// threadHeader names a thread and counts its trees.
func threadHeader(tt threadTrees, opt Options) string {
	t := tt.t
	s := fmt.Sprintf("thread %d", t.Tid)
	if t.Name != "" {
		s += " " + t.Name
	}
	s += fmt.Sprintf(" (pid %d): %s", tt.pid, plural(len(t.Trees), "tree"))
	if t.DroppedTrees > 0 {
		s += fmt.Sprintf(", %d older dropped (--detail-limit)", t.DroppedTrees)
	}
	if len(tt.trees) < len(t.Trees) {
		s += fmt.Sprintf(", %d whose kept call lasted at least %s shown", len(tt.trees), time.Duration(opt.MinNs))
	}
	return s
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// threadRows lays out a thread's trees. A tree's ancestors (the calls
// before its kept call) that are the same activations (function, start,
// depth) as the previous tree's are not repeated.
func threadRows(p *model.Profile, trees []*model.DetailTree, full bool) []row {
	var rows []row
	var prev []model.DetailCall // the previous tree's ancestors
	for _, tr := range trees {
		k := keptIndex(tr)
		anc := tr.Calls[:k]
		same := 0
		for same < len(anc) && same < len(prev) && sameActivation(&anc[same], &prev[same]) {
			same++
		}
		for i := same; i < len(tr.Calls); i++ {
			rows = append(rows, callRow(p, &tr.Calls[i], full))
		}
		prev = anc
	}
	return rows
}

func sameActivation(a, b *model.DetailCall) bool {
	return a.Func == b.Func && a.StartNs == b.StartNs && a.Depth == b.Depth
}

// callRow formats one call: "name(arg, ...) = ret", arguments only when
// recorded, "= ret" only when it returned. A call still running at the
// end, or already running when tracing began, has a duration that is a
// lower bound ("≥") and says so.
func callRow(p *model.Profile, c *model.DetailCall, full bool) row {
	var b strings.Builder
	b.WriteString(strings.Repeat("  ", c.Depth))
	b.WriteString(p.DisplayName(c.Func, full))
	if c.Flags.Has(model.DetailArgs) {
		b.WriteByte('(')
		for i, a := range args(c) {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(Show(a))
		}
		b.WriteByte(')')
	}
	if c.Flags.Has(model.DetailReturned) {
		b.WriteString(" = " + Show(c.Ret))
	}
	r := row{start: Offset(c.StartNs), dur: Duration(c.EndNs - c.StartNs), kept: c.Flags.Has(model.DetailKept)}
	open, inflight := c.Flags.Has(model.DetailOpen), c.Flags.Has(model.DetailInFlight)
	if open || inflight {
		r.dur = "≥ " + r.dur
	}
	if inflight {
		r.start = "≤ " + r.start
		b.WriteString(" (entered before tracing)")
	}
	if open {
		b.WriteString(" (still running at the end)")
	}
	r.call = b.String()
	return r
}
