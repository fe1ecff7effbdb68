package components

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/profile-dev/profile/internal/human"
	"github.com/profile-dev/profile/render"
)

// Fill of the tree's nodes by self time, on render's heat scale.
const (
	hotShare  = 10.0 // percent of the traced time: red, as render's --hot
	warmShare = 3.0  // orange, as render's --warm
)

// DOT draws the component tree as Graphviz DOT: one box per component
// path, labelled with its component and (calls, self, self %), total;
// edges from a step to the steps it entered, labelled with those entries.
// title heads the graph. The DOT is deterministic (the tree's order).
func DOT(r *Report, title string) []byte {
	var b bytes.Buffer
	b.WriteString("digraph components {\n")
	fmt.Fprintf(&b, "  graph [label=%s, labelloc=t, fontname=\"Helvetica\", fontsize=14, charset=\"UTF-8\", ranksep=0.4, nodesep=0.3];\n",
		quote(title))
	b.WriteString("  node [shape=box, style=filled, fillcolor=white, fontname=\"Helvetica\", fontsize=10];\n")
	b.WriteString("  edge [fontname=\"Helvetica\", fontsize=9];\n")
	id := 0
	var walk func(n *Node) int
	walk = func(n *Node) int {
		me := id
		id++
		label := fmt.Sprintf("%s\n(%d, %s, %s)\ntotal %s, %s", n.Name, n.Calls, human.Duration(n.SelfNs),
			human.Percent(n.SelfPct), human.Duration(n.TotalNs), human.Percent(n.TotalPct))
		if n.DroppedNs > 0 {
			label += "\n+" + human.Duration(n.DroppedNs) + " pruned"
		}
		attrs := "label=" + quote(label)
		switch {
		case me == 0:
			attrs += ", shape=ellipse, style=\"filled,bold\""
		default:
			attrs += ", " + render.HeatFill(n.SelfPct/100, warmShare/100, hotShare/100)
		}
		fmt.Fprintf(&b, "  n%d [%s];\n", me, attrs)
		for _, c := range n.Children {
			ci := walk(c)
			width := 1 + 4*min(c.TotalPct, 100)/100
			fmt.Fprintf(&b, "  n%d -> n%d [label=%s, penwidth=%s];\n", me, ci, quote(strconv.FormatInt(c.Calls, 10)+"×"),
				strconv.FormatFloat(width, 'f', 2, 64))
		}
		return me
	}
	walk(r.Tree)
	legend := []string{"Legend", "node: component (calls into it, self time, self %), total time",
		"a path's steps: frames grouped by component (" + r.Mode + ")",
		"edge: entries into the callee component",
		"% of the " + timeKind(r) + " " + human.Duration(r.TracedNs),
		fmt.Sprintf("fill pale to red by self share: orange from %s, red from %s (as render)", human.Percent(warmShare), human.Percent(hotShare))}
	fmt.Fprintf(&b, "  legend [shape=note, fillcolor=\"#f8f8f8\", fontsize=9, label=%s];\n",
		quote(strings.Join(legend, "\n")+"\n"))
	b.WriteString("}\n")
	return b.Bytes()
}

// quote makes s a DOT string: backslashes and quotes escaped, line breaks
// as left-justified breaks (\l) when s ends with one, centred (\n) else.
func quote(s string) string {
	brk := `\n`
	if strings.HasSuffix(s, "\n") {
		brk = `\l`
	}
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", brk, "\r", " ")
	return `"` + r.Replace(s) + `"`
}
