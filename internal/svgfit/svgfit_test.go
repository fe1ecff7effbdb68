package svgfit

import (
	"strings"
	"testing"
)

const svgHead = `<?xml version="1.0"?><svg width="300pt" height="100pt" viewBox="0.00 0.00 300.00 100.00" xmlns="http://www.w3.org/2000/svg">`

func nodeSVG(shape, texts string) string {
	return `<g id="node1" class="node"><title>n1</title>` + shape + texts + `</g>`
}

func TestCheck(t *testing.T) {
	box := `<polygon fill="#fff7ec" stroke="black" points="100,-50 0,-50 0,0 100,0 100,-50"/>`
	dark := `<polygon fill="#7f0000" stroke="black" points="100,-50 0,-50 0,0 100,0 100,-50"/>`
	oval := `<ellipse fill="white" stroke="black" cx="50" cy="-25" rx="50" ry="25"/>`
	text := func(x, s, fill string) string {
		f := ""
		if fill != "" {
			f = ` fill="` + fill + `"`
		}
		return `<text text-anchor="middle" x="` + x + `" y="-20" font-family="Helvetica" font-size="10.00"` + f + `>` + s + `</text>`
	}
	for _, c := range []struct {
		name, body string
		problem    string // "" for none
	}{
		{"fits", nodeSVG(box, text("50", "twelve chars", "")), ""},                    // 12 × 6 = 72 pt in 100
		{"overflows", nodeSVG(box, text("50", "seventeen letters", "")), "overflows"}, // 102 pt in 100
		{"off centre", nodeSVG(box, text("80", "twelve chars", "")), "overflows"},
		{"white on pale", nodeSVG(box, text("50", "pale", "white")), "contrast"},
		{"white on dark", nodeSVG(dark, text("50", "dark", "white")), ""},
		{"black on dark", nodeSVG(dark, text("50", "dark", "")), "contrast"},
		{"ellipse centre", nodeSVG(oval, `<text text-anchor="middle" x="50" y="-22" font-size="10.00">short</text>`), ""},
		{"ellipse corner", nodeSVG(oval, `<text text-anchor="middle" x="50" y="-5" font-size="10.00">a wider text</text>`), "overflows"},
	} {
		d, err := Check([]byte(svgHead+c.body+`</svg>`), 0.6)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if d.Width != 300 || d.Height != 100 || d.Nodes != 1 || d.Texts != 1 {
			t.Errorf("%s: %+v", c.name, d)
		}
		got := strings.Join(d.Problems, "; ")
		if c.problem == "" && got != "" || c.problem != "" && !strings.Contains(got, c.problem) {
			t.Errorf("%s: problems %q, want %q", c.name, got, c.problem)
		}
	}
	if _, err := Check([]byte("<svg><g"), 0.6); err == nil {
		t.Error("truncated SVG accepted")
	}
}
