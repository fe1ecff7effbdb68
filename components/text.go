package components

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/profile-dev/profile/internal/human"
	"github.com/profile-dev/profile/internal/tables"
)

// layout lays r out for the human formats (text and markdown, which show
// the same cells): the flat statistics, then the tree in depth-first
// order with each step named by name(its component path). Times have three
// significant digits, percentages two decimals; the pruned column appears
// only for a pruned profile.
func layout(r *Report, name func(path []string) string) []tables.Table {
	pruned := false
	for _, s := range r.Components {
		pruned = pruned || s.DroppedNs > 0
	}
	header := []string{"calls", "self", "self %", "total", "total %"}
	if pruned {
		header = append(header, "pruned")
	}
	row := func(first string, s *Stat) []string {
		out := []string{first, strconv.FormatInt(s.Calls, 10), human.Duration(s.SelfNs), human.Percent(s.SelfPct),
			human.Duration(s.TotalNs), human.Percent(s.TotalPct)}
		if pruned {
			out = append(out, human.Duration(s.DroppedNs))
		}
		return out
	}
	by := "modules"
	if r.Mode == "rules" {
		by = "entry functions"
	}
	kinds := make([]tables.Kind, len(header)+1)
	for c := range header {
		kinds[c+1] = tables.Number
	}
	kinds[0] = tables.Symbol
	fl := tables.Table{Title: fmt.Sprintf("Components by %s (by self time; %% of the %s %s)", by, timeKind(r), human.Duration(r.TracedNs)),
		Header: append([]string{"component"}, header...), Kinds: kinds}
	for i := range r.Components {
		fl.Rows = append(fl.Rows, row(r.Components[i].Name, &r.Components[i]))
	}
	tr := tables.Table{Title: "Component tree (calls: entries into the step; total: the step and what it called)",
		Header: append([]string{"component path"}, header...), Kinds: kinds}
	var path []string
	var walk func(n *Node)
	walk = func(n *Node) {
		path = append(path, n.Name)
		tr.Rows = append(tr.Rows, row(name(path), &n.Stat))
		for _, c := range n.Children {
			walk(c)
		}
		path = path[:len(path)-1]
	}
	walk(r.Tree)
	return []tables.Table{fl, tr}
}

// WriteText writes r as text tables for a terminal; the tree's steps are
// indented by depth.
func WriteText(w io.Writer, r *Report) error {
	indent := func(path []string) string { return strings.Repeat("  ", len(path)-1) + path[len(path)-1] }
	return tables.WriteText(w, layout(r, indent))
}

// WriteMarkdown writes r as GitHub-flavoured markdown; the tree's steps
// are whole paths, "START › Other › parser".
func WriteMarkdown(w io.Writer, r *Report) error {
	whole := func(path []string) string { return strings.Join(path, " › ") }
	return tables.WriteMarkdown(w, "Components", layout(r, whole))
}

// timeKind names the time r's percentages are of.
func timeKind(r *Report) string {
	if r.Times == "busy" {
		return "busy time"
	}
	return "traced time"
}
