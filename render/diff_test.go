package render_test

import (
	"strings"
	"testing"

	"github.com/profile-dev/profile/diff"
	"github.com/profile-dev/profile/internal/golden"
	"github.com/profile-dev/profile/model"
	"github.com/profile-dev/profile/model/modeltest"
	"github.com/profile-dev/profile/render"
)

// slower is the sample with fib's self time tripled in every context and
// compute's halved, and a call more of worker from main (the graph's
// numbers only: the drawing does not check that times add up).
func slower() *model.Profile {
	p := modeltest.Sample()
	for ti := range p.Threads {
		for i := range p.Threads[ti].Nodes {
			n := &p.Threads[ti].Nodes[i]
			switch p.Functions[n.Func].Name {
			case "fib":
				n.SelfNs *= 3
			case "compute":
				n.SelfNs /= 2
			case "worker":
				if ti == 0 {
					n.Calls++
				}
			}
		}
	}
	return p
}

func TestDiffColours(t *testing.T) {
	base, p := modeltest.Sample(), slower()
	r, err := diff.Compare(base, p)
	if err != nil {
		t.Fatal(err)
	}
	dot := mustDOT(t, p, render.Options{Diff: r})
	golden.Check(t, "sample-diff.dot", dot)
	cases := []struct{ node, want string }{
		// fib 135ns -> 405ns: +270ns, 22% of the drawn 1.24µs, past 10%:
		// deepest red, white text
		{"fib", `Δ +270ns (+200.00%)", fillcolor="#c80000", fontcolor=white`},
		// compute 420ns -> 210ns: -17% of the time, deepest blue
		{"worker [L1]", `Δ 0ns (0.00%), +1 calls", fillcolor="#e0e0e0"`},
		{"compute", `Δ -210ns (-50.00%)", fillcolor="#003cc8", fontcolor=white`},
		{"do_fork", `Δ 0ns (0.00%)", fillcolor="#e0e0e0"`},
	}
	for _, c := range cases {
		if l := nodeLine(t, dot, c.node); !strings.Contains(l, c.want+",") {
			t.Errorf("%s: %s, want %s", c.node, l, c.want)
		}
	}
	// no heat colours under a diff; START keeps its ellipse
	for _, heat := range []string{"#fff7ec", "#fdbb84", "#fc8d59", "#d7301f", "#7f0000"} {
		if strings.Contains(string(dot), heat) {
			t.Errorf("heat colour %s in a diff", heat)
		}
	}
	if l := nodeLine(t, dot, "START"); strings.Contains(l, "fillcolor") || strings.Contains(l, "Δ") {
		t.Errorf("START: %s", l)
	}
	if !strings.Contains(string(dot), "red: slower, blue: faster") {
		t.Error("the legend does not explain the colours")
	}
}
