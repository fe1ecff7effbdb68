// Package svgfit checks a Graphviz SVG drawing the way a reader sees it:
// its size, whether every node's text lies inside the node's shape, and
// whether the text contrasts with the shape's fill. Text widths are
// estimated from the font size (em per character), which is what a test
// can know without a browser.
package svgfit

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MinContrast is the least contrast ratio (WCAG) of a node's text on its
// fill: the one required of large text.
const MinContrast = 3.0

// Drawing is what Check found.
type Drawing struct {
	Width, Height float64 // of the viewBox, in points
	Nodes         int     // node groups
	Texts         int     // texts inside nodes
	Problems      []string
}

// node is one <g class="node"> being read.
type node struct {
	shapes []shape
	texts  []textEl
}

type shape struct {
	ellipse        bool
	x0, y0, x1, y1 float64 // bounding box; for an ellipse, of the ellipse
	fill           string
}

type textEl struct {
	x, y, size float64
	anchor     string
	fill       string
	s          string
}

// Check reads svg and reports its size and the problems of its nodes'
// texts, each text taken as em × size wide per character.
func Check(svg []byte, em float64) (*Drawing, error) {
	d := &Drawing{}
	dec := xml.NewDecoder(bytes.NewReader(svg))
	dec.Strict = false
	var cur *node
	depth, nodeDepth := 0, -1
	var text *textEl
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("svgfit: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			a := attrs(t)
			switch t.Name.Local {
			case "svg":
				if vb := strings.Fields(a["viewBox"]); len(vb) == 4 {
					d.Width, _ = strconv.ParseFloat(vb[2], 64)
					d.Height, _ = strconv.ParseFloat(vb[3], 64)
				}
			case "g":
				if a["class"] == "node" && cur == nil {
					cur, nodeDepth = &node{}, depth
				}
			case "polygon":
				if cur != nil {
					if s, ok := polygon(a); ok {
						cur.shapes = append(cur.shapes, s)
					}
				}
			case "ellipse":
				if cur != nil {
					cx, cy, rx, ry := num(a["cx"]), num(a["cy"]), num(a["rx"]), num(a["ry"])
					cur.shapes = append(cur.shapes, shape{ellipse: true, x0: cx - rx, y0: cy - ry, x1: cx + rx, y1: cy + ry, fill: a["fill"]})
				}
			case "text":
				if cur != nil {
					text = &textEl{x: num(a["x"]), y: num(a["y"]), size: num(a["font-size"]), anchor: a["text-anchor"], fill: a["fill"]}
				}
			}
		case xml.CharData:
			if text != nil {
				text.s += string(t)
			}
		case xml.EndElement:
			if t.Name.Local == "text" && text != nil {
				cur.texts = append(cur.texts, *text)
				text = nil
			}
			if t.Name.Local == "g" && depth == nodeDepth {
				d.check(cur, em)
				cur, nodeDepth = nil, -1
			}
			depth--
		}
	}
	return d, nil
}

func attrs(t xml.StartElement) map[string]string {
	m := make(map[string]string, len(t.Attr))
	for _, a := range t.Attr {
		m[a.Name.Local] = a.Value
	}
	return m
}

func num(s string) float64 {
	v, _ := strconv.ParseFloat(s, 64)
	return v
}

func polygon(a map[string]string) (shape, bool) {
	s := shape{x0: math.Inf(1), y0: math.Inf(1), x1: math.Inf(-1), y1: math.Inf(-1), fill: a["fill"]}
	pts := strings.Fields(a["points"])
	for _, p := range pts {
		x, y, ok := strings.Cut(p, ",")
		if !ok {
			return shape{}, false
		}
		s.x0, s.x1 = math.Min(s.x0, num(x)), math.Max(s.x1, num(x))
		s.y0, s.y1 = math.Min(s.y0, num(y)), math.Max(s.y1, num(y))
	}
	return s, len(pts) > 0
}

// check checks one node: each text inside its shape (the first shape, the
// node's outline) and readable on its fill.
func (d *Drawing) check(n *node, em float64) {
	d.Nodes++
	if len(n.shapes) == 0 {
		if len(n.texts) > 0 {
			d.Problems = append(d.Problems, fmt.Sprintf("node with text %q has no shape", n.texts[0].s))
		}
		return
	}
	sh := n.shapes[0]
	for _, t := range n.texts {
		d.Texts++
		w := float64(utf8.RuneCountInString(t.s)) * t.size * em
		x0 := t.x - w/2
		switch t.anchor {
		case "start":
			x0 = t.x
		case "end":
			x0 = t.x - w
		}
		// the glyphs' box: ascenders above the baseline, descenders below
		tx0, tx1, ty0, ty1 := x0, x0+w, t.y-0.75*t.size, t.y+0.25*t.size
		if !inside(sh, tx0, ty0) || !inside(sh, tx1, ty0) || !inside(sh, tx0, ty1) || !inside(sh, tx1, ty1) {
			d.Problems = append(d.Problems, fmt.Sprintf("text %q (%.0f-%.0f × %.0f-%.0f) overflows its shape (%.0f-%.0f × %.0f-%.0f)",
				t.s, tx0, tx1, ty0, ty1, sh.x0, sh.x1, sh.y0, sh.y1))
		}
		fg := t.fill
		if fg == "" {
			fg = "black"
		}
		if c, ok := contrast(fg, sh.fill); ok && c < MinContrast {
			d.Problems = append(d.Problems, fmt.Sprintf("text %q in %s on %s: contrast %.1f", t.s, fg, sh.fill, c))
		}
	}
}

func inside(s shape, x, y float64) bool {
	if !s.ellipse {
		return x >= s.x0 && x <= s.x1 && y >= s.y0 && y <= s.y1
	}
	cx, cy, rx, ry := (s.x0+s.x1)/2, (s.y0+s.y1)/2, (s.x1-s.x0)/2, (s.y1-s.y0)/2
	dx, dy := (x-cx)/rx, (y-cy)/ry
	return dx*dx+dy*dy <= 1
}

// contrast is the WCAG contrast ratio of two colours; ok is false when
// one is not a colour this package reads ("none", a gradient).
func contrast(a, b string) (float64, bool) {
	la, ok1 := luminance(a)
	lb, ok2 := luminance(b)
	if !ok1 || !ok2 {
		return 0, false
	}
	return (math.Max(la, lb) + 0.05) / (math.Min(la, lb) + 0.05), true
}

var named = map[string]string{"black": "#000000", "white": "#ffffff", "red": "#ff0000", "lightgrey": "#d3d3d3"}

func luminance(c string) (float64, bool) {
	if n, ok := named[strings.ToLower(c)]; ok {
		c = n
	}
	if len(c) != 7 || c[0] != '#' {
		return 0, false
	}
	v, err := strconv.ParseUint(c[1:], 16, 32)
	if err != nil {
		return 0, false
	}
	lin := func(x uint64) float64 {
		s := float64(x) / 255
		if s <= 0.03928 {
			return s / 12.92
		}
		return math.Pow((s+0.055)/1.055, 2.4)
	}
	return 0.2126*lin(v>>16&0xff) + 0.7152*lin(v>>8&0xff) + 0.0722*lin(v&0xff), true
}
